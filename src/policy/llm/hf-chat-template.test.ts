// A chat template rendered as Hugging Face's Python renders it: str.strip/lstrip/rstrip with Python's meaning (the
// Qwen3 cases against Python's own rendering are in src/scenario/token-check.test.ts, fixtures/qwen3-renders).
import { describe, expect, it } from "vitest";
import { pythonStrip, renderTokenizerChatTemplate } from "./hf-chat-template.js";

const withTemplate = (template: string, config: Record<string, unknown> = {}) => ({ get_chat_template: () => template, config });
const render = (template: string, content: string) =>
  renderTokenizerChatTemplate(withTemplate(template), [{ role: "user", content }], { addGenerationPrompt: false });

describe("pythonStrip", () => {
  it("removes only the characters given, from the ends asked, by code point", () => {
    expect(pythonStrip("\n\n  x \n", "\n", "both")).toBe("  x ");
    expect(pythonStrip("\n\n  x \n", "\n", "left")).toBe("  x \n");
    expect(pythonStrip("\n\n  x \n", "\n", "right")).toBe("\n\n  x ");
    expect(pythonStrip("abcxcba", "cab", "both")).toBe("x");
    // An astral character is one code point: its surrogate halves are not stripped apart.
    expect(pythonStrip("🙂x🙂", "🙂", "both")).toBe("x");
    expect(pythonStrip("\ud83dx", "🙂", "both")).toBe("\ud83dx");
  });

  it("without characters removes Python's whitespace, not JavaScript's", () => {
    expect(pythonStrip("\x1c\x85 x\u3000\t", null, "both")).toBe("x");
    expect(pythonStrip("\ufeffx\ufeff", undefined, "both")).toBe("\ufeffx\ufeff");
  });

  it("refuses what Python refuses", () => {
    expect(() => pythonStrip(3, null, "both")).toThrow("strip() of a number");
    expect(() => pythonStrip("x", 3, "right")).toThrow("rstrip arg must be None or str");
  });
});

describe("renderTokenizerChatTemplate", () => {
  const content = "\n\n  indented \t\n";
  it("reads a template's strip calls as Python's, chained and nested too", () => {
    expect(render("{{ messages[0].content.rstrip('\\n') }}", content)).toBe("\n\n  indented \t");
    expect(render("{{ messages[0].content.lstrip('\\n').rstrip('\\n') }}|", content)).toBe("  indented \t|");
    expect(render("{{ (messages[0].content ~ 'ab').strip('\\nab') }}", content)).toBe("  indented \t");
    expect(render("{{ messages[0].content.strip() }}", "\x85 x \x1c")).toBe("x");
    expect(render("{{ messages[0].content.split('d')[0].lstrip('\\n ') }}", content)).toBe("in");
  });

  it("reads the trim filter as Jinja's in Python (str.strip: Python's whitespace)", () => {
    expect(render("{{ messages[0].content | trim }}|", "\x85 x \ufeff")).toBe("x \ufeff|");
    expect(render("{{ messages[0].content | trim('x') }}", "xxaxx")).toBe("a");
  });

  it("writes tojson as transformers' Python does: floats as Python writes them, indent as json.dumps lays it out", () => {
    const tools = [{ a: 0.00001, b: [1, 0.5, "é"], c: null, d: true }];
    const tojson = (template: string) => renderTokenizerChatTemplate(withTemplate(template), [], { addGenerationPrompt: false, tools });
    // Expected texts: Python's json.dumps(…, ensure_ascii=False) of the same values.
    expect(tojson("{{ tools | tojson }}")).toBe('[{"a": 1e-05, "b": [1, 0.5, "é"], "c": null, "d": true}]');
    expect(tojson("{{ {'a': 0.00001, 'b': [1, {}], 'c': []} | tojson(indent=2) }}")).toBe('{\n  "a": 1e-05,\n  "b": [\n    1,\n    {}\n  ],\n  "c": []\n}');
    expect(tojson("{{ [1.0, 2] | tojson }}")).toBe("[1.0, 2]");
  });

  it("passes the variables transformers.js passes: special tokens, add_generation_prompt, tools", () => {
    const template = "{{ bos_token }}|{{ eos_token }}|{{ 'prompt' if add_generation_prompt else 'closed' }}|{{ tools | length if tools else 'none' }}";
    const tokenizer = withTemplate(template, { bos_token: "<s>", eos_token: { __type: "AddedToken", content: "</s>" } });
    expect(renderTokenizerChatTemplate(tokenizer, [], { addGenerationPrompt: true })).toBe("<s>|</s>|prompt|none");
    expect(renderTokenizerChatTemplate(tokenizer, [], { addGenerationPrompt: false, tools: [{}, {}] })).toBe("<s>|</s>|closed|2");
  });
});
