// The consistency check on Qwen3's real vocabulary and template (loaded once: tokenizer.json is 11 MB), on the
// byte-level tokenizer with its ChatML template; and the Proof fixtures: transformers.js's renders against
// Hugging Face's Python rendering (fixtures/qwen3-renders/render.py, its output renders.json).

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { byteLevelTokenizer, renderChatTemplate, type Message } from "../core/index.js";
import { loadTokenizerFolder, qwen3TokenizerFolder, type LoadedTokenizer } from "../policy/llm/tokenizer-load.js";
import { checkSample, parseChatMl, reportOf, type CheckSample, type CheckTokenizer, type TemplateMessage } from "./token-check.js";

const HERE = dirname(fileURLToPath(import.meta.url));

interface RenderCase {
  name: string;
  messages: TemplateMessage[];
  tools?: unknown[];
  add_generation_prompt: boolean;
  rendered: string;
}
const fixtures = JSON.parse(readFileSync(join(HERE, "fixtures/qwen3-renders/renders.json"), "utf8")) as { cases: RenderCase[] };
const tokenizerJson = JSON.parse(readFileSync(join(qwen3TokenizerFolder(), "tokenizer.json"), "utf8")) as {
  added_tokens: { id: number; content: string }[];
  model: { vocab: Record<string, number> };
};
const addedId = (content: string) => tokenizerJson.added_tokens.find((t) => t.content === content)!.id;

let qwen3: LoadedTokenizer;
beforeAll(async () => {
  qwen3 = await loadTokenizerFolder(qwen3TokenizerFolder(), "builtin:tiny-qwen3");
}, 60_000);

const byteLevel: CheckTokenizer = {
  encode: (text) => byteLevelTokenizer.encode(text),
  decode: (ids) => byteLevelTokenizer.decode(ids),
  tokenText: (id) => byteLevelTokenizer.tokenText(id),
  applyChatTemplate: (messages, options) => renderChatTemplate(messages, { tools: options.tools as never, addGenerationPrompt: options.addGenerationPrompt }),
  eosText: "<|im_end|>",
};

/** A message as a rollout writes it: its content encoded alone, no special tokens added. */
const msg = (tok: CheckTokenizer, role: string, content: string, tokens = content): Message => ({ role, content, token_ids: tok.encode(tokens) });

describe("Qwen3 renders: transformers.js against Hugging Face's Python rendering", () => {
  it.each(fixtures.cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    expect(qwen3.applyChatTemplate(c.messages, { tools: c.tools ?? null, addGenerationPrompt: c.add_generation_prompt })).toBe(c.rendered);
  });

  it("has the cases the proof asks for: tools, tool calls, thinking, non-ASCII text, an emoji, both generation-prompt settings", () => {
    const all = fixtures.cases.map((c) => c.rendered).join("");
    expect(fixtures.cases.some((c) => c.tools)).toBe(true);
    expect(all).toContain("<tool_response>");
    expect(all).toContain("</think>");
    expect(all).toMatch(/[^\x00-\x7f]/);
    expect(all).toMatch(/\p{Extended_Pictographic}/u);
    expect(new Set(fixtures.cases.map((c) => c.add_generation_prompt))).toEqual(new Set([true, false]));
  });
});

describe("Qwen3 token ids against tokenizer.json", () => {
  it("the markers are their added tokens", () => {
    expect(addedId("<|im_start|>")).toBe(151644);
    expect(addedId("<|im_end|>")).toBe(151645);
    for (const marker of ["<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]) {
      expect(qwen3.encode(marker)).toEqual([addedId(marker)]);
    }
  });

  it("a rendered prompt's ids are the vocabulary's, and decode back to the text", () => {
    const c = fixtures.cases.find((x) => x.name === "non_ascii_emoji_generation_prompt")!;
    const ids = qwen3.encode(c.rendered);
    const v = tokenizerJson.model.vocab;
    // <|im_start|> system \n …, and the generation prompt <|im_start|> assistant \n at the end.
    expect(ids.slice(0, 3)).toEqual([151644, v["system"], v["\u010a"]]);
    expect(ids.slice(-3)).toEqual([151644, v["assistant"], v["\u010a"]]);
    expect(qwen3.decode(ids)).toBe(c.rendered);
    // Two newlines are one token (Ċ Ċ), as the pre-tokenizer groups them: what the merge case below relies on.
    expect(qwen3.encode("\n\n")).toEqual([v["\u010a\u010a"]]);
  });
});

describe("consistency verdicts on Qwen3", () => {
  const tools = fixtures.cases[0]!.tools!;
  const rawPrompt = { messages: [{ role: "user", content: "Count the lines of a.txt 🙂" }], tools };
  /** The prompt as the runner makes it from raw messages: the template's rendering with the generation prompt. */
  const promptOf = (tok: CheckTokenizer) => msg(tok, "user", tok.applyChatTemplate(rawPrompt.messages, { tools, addGenerationPrompt: true }));
  const call = '<tool_call>\n{"name": "run_shell", "arguments": {"command": "wc -l a.txt"}}\n</tool_call>';
  // The template envelope: what the template writes between the assistant's end-of-turn token and the next content.
  const toolObservation = (tok: CheckTokenizer, raw: string) => msg(tok, "user", raw, `\n<|im_start|>user\n<tool_response>\n${raw}\n</tool_response><|im_end|>\n<|im_start|>assistant\n`);
  const assistant = (tok: CheckTokenizer, text: string) => msg(tok, "assistant", text, `${text}<|im_end|>`);

  it("a structured run written as the template writes it is consistent (think blocks with its newlines)", () => {
    const sample: CheckSample = {
      structured: true,
      raw: rawPrompt,
      messageLog: [
        promptOf(qwen3),
        assistant(qwen3, `<think>\nUse wc.\n</think>\n\n${call}`),
        toolObservation(qwen3, "3 a.txt"),
        assistant(qwen3, "<think>\nDone.\n</think>\n\n3 lines."),
        toolObservation(qwen3, "[graded] reward 1.0"),
      ],
    };
    const r = checkSample(sample, qwen3);
    expect(r.first_divergence).toBeNull();
    expect(r.consistent).toBe(true);
    // The same log without the raw messages: the prompt is read back from its rendering.
    expect(checkSample({ ...sample, raw: null }, qwen3).consistent).toBe(true);
  });

  it("the same turns written otherwise drift: whitespace around a think block", () => {
    const sample: CheckSample = {
      structured: true,
      raw: rawPrompt,
      messageLog: [promptOf(qwen3), assistant(qwen3, `<think>Use wc.</think>${call}`), toolObservation(qwen3, "3 a.txt")],
    };
    const d = checkSample(sample, qwen3).first_divergence!;
    expect(d.reason).toBe("think_whitespace");
    expect(d.message_index).toBe(1);
    expect(d.ours[0]).toBe("Use");
    expect(d.template[0]).toBe("\n");
  });

  it("an earlier turn's reasoning kept, which Qwen3's template drops, drifts: reasoning dropped", () => {
    // Unstructured: observations are user messages, so the first turn is before the last user query.
    const userObservation = (raw: string) => msg(qwen3, "environment", raw, `\n<|im_start|>user\n${raw}<|im_end|>\n<|im_start|>assistant\n`);
    const sample: CheckSample = {
      structured: false,
      messageLog: [
        msg(qwen3, "user", "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"),
        assistant(qwen3, "<think>\nAdd them.\n</think>\n\n4"),
        userObservation("And 3+3?"),
        assistant(qwen3, "<think>\nAdd again.\n</think>\n\n6"),
        userObservation("ok"),
      ],
    };
    const r = checkSample(sample, qwen3);
    expect(r.first_divergence).toMatchObject({ message_index: 1, reason: "reasoning_dropped", ours: expect.arrayContaining(["<think>"]) });
    expect(r.first_divergence!.template[0]).toBe("4");
    // Every turn is before the last user query (the observation after it): without their reasoning it is consistent.
    const without = { ...sample, messageLog: sample.messageLog.map((m, i) => (i === 1 ? assistant(qwen3, "4") : i === 3 ? assistant(qwen3, "6") : m)) };
    expect(checkSample(without, qwen3).consistent).toBe(true);
  });

  it("an observation wrapped otherwise than the template wraps tool responses drifts: observation envelope", () => {
    // The fork's envelope: no newline after the assistant's end-of-turn token.
    const forkObservation = msg(qwen3, "user", "3 a.txt", "<|im_start|>user\n<tool_response>\n3 a.txt\n</tool_response><|im_end|>\n<|im_start|>assistant\n");
    const sample: CheckSample = { structured: true, raw: rawPrompt, messageLog: [promptOf(qwen3), assistant(qwen3, call), forkObservation] };
    const d = checkSample(sample, qwen3).first_divergence!;
    expect(d).toMatchObject({ message_index: 2, reason: "observation_envelope" });
    expect(d.ours[0]).toBe("<|im_start|>");
    expect(d.template[0]).toBe("\n");
  });

  it("two messages whose boundary BPE-merges in one text drift: a merge across a message boundary", () => {
    // The prompt ends with the generation prompt's newline and the turn starts with one: "\n" "\n" apart, "\n\n" as one.
    const sample: CheckSample = { structured: true, raw: rawPrompt, messageLog: [promptOf(qwen3), assistant(qwen3, `\n${call}`), toolObservation(qwen3, "3 a.txt")] };
    const r = checkSample(sample, qwen3);
    const d = r.first_divergence!;
    expect(d.reason).toBe("boundary_merge");
    expect(d.message_index).toBe(0);
    expect(d.template[0]).toBe("\n\n");
    // The texts are the same: only the ids differ.
    expect(qwen3.decode(r.ours)).toBe(r.reference.text);
  });

  it("a log that ends on a turn without a think block drifts where Qwen3 writes an empty one on the last turn", () => {
    const sample: CheckSample = { structured: true, raw: rawPrompt, messageLog: [promptOf(qwen3), assistant(qwen3, call)] };
    expect(checkSample(sample, qwen3).first_divergence).toMatchObject({ message_index: 1, reason: "think_added", template: ["<think>", "\n\n", "</think>", "\n\n", "<tool_call>", "\n"] });
    // Ending on a turn as the template writes it is consistent, though the newline after its end-of-turn token never came.
    expect(checkSample({ ...sample, messageLog: [promptOf(qwen3), assistant(qwen3, `<think>\n\n</think>\n\n${call}`)] }, qwen3).consistent).toBe(true);
  });

  it("a turn that only closes its reasoning (a generation prefilled with <think>) drifts where the template opens it: think added", () => {
    const sample: CheckSample = { structured: true, raw: rawPrompt, messageLog: [promptOf(qwen3), assistant(qwen3, `List it.\n</think>\n\n${call}`), toolObservation(qwen3, "3 a.txt")] };
    expect(checkSample(sample, qwen3).first_divergence).toMatchObject({ message_index: 1, reason: "think_added" });
  });

  it("a log cut to fit max_seq_len inside its last observation: cut short, not an envelope of another shape", () => {
    const full = toolObservation(qwen3, "3 a.txt");
    const cut: Message = { ...full, token_ids: full.token_ids.slice(0, 6) };
    const log = [promptOf(qwen3), assistant(qwen3, `<think>\nUse wc.\n</think>\n\n${call}`), cut];
    expect(checkSample({ structured: true, raw: rawPrompt, messageLog: log, cutShort: true }, qwen3).first_divergence).toMatchObject({ message_index: 2, reason: "cut_short", ours: [] });
    // Not known to be cut: the envelope is what differs, as before.
    expect(checkSample({ structured: true, raw: rawPrompt, messageLog: log }, qwen3).first_divergence).toMatchObject({ reason: "observation_envelope" });
  });

  it("a turn whose tokens are not the tokenizer's split of its text drifts: retokenized", () => {
    // A model may sample "Hel" "lo" where encoding "Hello" gives one token: no boundary, the same text.
    const split: Message = { role: "assistant", content: "Hello", token_ids: [...qwen3.encode("Hel"), ...qwen3.encode("lo"), ...qwen3.encode("<|im_end|>")] };
    const sample: CheckSample = { structured: true, raw: rawPrompt, messageLog: [promptOf(qwen3), split, toolObservation(qwen3, "x")] };
    expect(checkSample(sample, qwen3).first_divergence).toMatchObject({ message_index: 1, reason: "retokenized", ours: ["Hel", "lo", "<|im_end|>", "\n", "<|im_start|>", "user"], template: ["Hello", "<|im_end|>", "\n", "<|im_start|>", "user", "\n"] });
  });

  it("the report counts samples and reasons", () => {
    const ok: CheckSample = { structured: true, raw: rawPrompt, messageLog: [promptOf(qwen3)] };
    const bad: CheckSample = { structured: true, raw: rawPrompt, messageLog: [promptOf(qwen3), assistant(qwen3, `\n${call}`), toolObservation(qwen3, "x")] };
    const report = reportOf([{ idx: 0, result: checkSample(ok, qwen3) }, { idx: 7, result: checkSample(bad, qwen3) }], "builtin:tiny-qwen3");
    expect(report.summary).toEqual({ samples: 2, consistent: 1, drifting: 1, reasons: { boundary_merge: 1 }, tokenizer: "builtin:tiny-qwen3" });
    expect(report.samples.map((s) => [s.idx, s.consistent])).toEqual([[0, true], [7, false]]);
  });
});

describe("consistency verdicts on the byte-level tokenizer (ChatML)", () => {
  it("a structured run in the template envelope is consistent", () => {
    const prompt = renderChatTemplate([{ role: "user", content: "Grüße 🙂" }], { addGenerationPrompt: true });
    const log = [
      msg(byteLevel, "user", prompt),
      msg(byteLevel, "assistant", "<tool_call>\n{}\n</tool_call>", "<tool_call>\n{}\n</tool_call><|im_end|>"),
      msg(byteLevel, "user", "ok ✓", "\n<|im_start|>user\n<tool_response>\nok ✓\n</tool_response><|im_end|>\n<|im_start|>assistant\n"),
      msg(byteLevel, "assistant", "done", "done<|im_end|>"),
    ];
    expect(checkSample({ structured: true, messageLog: log }, byteLevel).consistent).toBe(true);
  });

  it("a generation prompt that opens a think block prefills the first turn, from raw messages or a rendered prompt", () => {
    // A template like Qwen3's with thinking forced: the generation prompt ends with `<think>\n`.
    const thinking: CheckTokenizer = {
      ...byteLevel,
      applyChatTemplate: (messages, options) => byteLevel.applyChatTemplate(messages, options) + (options.addGenerationPrompt ? "<think>\n" : ""),
    };
    const raw = { messages: [{ role: "user", content: "hi" }] };
    const prompt = thinking.applyChatTemplate(raw.messages, { addGenerationPrompt: true });
    const log = [
      msg(thinking, "user", prompt),
      msg(thinking, "assistant", "hm</think>\nhello", "hm</think>\nhello<|im_end|>"),
      msg(thinking, "user", "ok", "\n<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n"),
      msg(thinking, "assistant", "again</think>\nbye", "again</think>\nbye<|im_end|>"),
      msg(thinking, "user", "ok", "\n<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n"),
    ];
    expect(checkSample({ structured: true, raw, messageLog: log }, thinking).consistent).toBe(true);
    expect(checkSample({ structured: true, messageLog: log }, thinking).consistent).toBe(true);
  });

  it("a stripped prompt (no newline after the generation prompt's header) drifts at the first turn", () => {
    const prompt = renderChatTemplate([{ role: "user", content: "hi" }], { addGenerationPrompt: true }).trim();
    const log = [msg(byteLevel, "user", prompt), msg(byteLevel, "assistant", "hello", "hello<|im_end|>")];
    expect(checkSample({ structured: false, messageLog: log }, byteLevel).first_divergence).toMatchObject({ message_index: 1, reason: "generation_prompt", ours: ["h", "e", "l", "l", "o", "<|im_end|>"] });
  });
});

describe("parseChatMl", () => {
  it("reads a rendering back into its turns and its open generation prompt", () => {
    expect(parseChatMl("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU\nV<|im_end|>\n<|im_start|>assistant\n<think>\n")).toEqual({
      messages: [{ role: "system", content: "S" }, { role: "user", content: "U\nV" }],
      open: { prefill: "<think>\n" },
    });
    expect(parseChatMl("<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant")).toEqual({ messages: [{ role: "user", content: "U" }], open: { prefill: "" } });
    expect(parseChatMl("plain text")).toBeNull();
    expect(parseChatMl("<|im_start|>user\nU<|im_end|>trailing")).toBeNull();
  });
});
