import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeTool, ToolRegistry } from "../../../core/index.js";
import {
  analyzeAssistantText,
  firstLines,
  leafSlices,
  markerSegments,
  type Segment,
  type ThinkSegment,
  type ToolCallSegment,
} from "./segments.js";

const kinds = (segments: readonly Segment[]) => segments.map((s) => s.kind);
const call = (segments: readonly Segment[], i = 0) => segments.filter((s): s is ToolCallSegment => s.kind === "tool_call")[i]!;
const think = (segments: readonly Segment[], i = 0) => segments.filter((s): s is ThinkSegment => s.kind === "think")[i]!;

/** Every character is in exactly one leaf, in order. */
function expectCovers(text: string, segments: readonly Segment[]) {
  expect(leafSlices(segments, text).join("")).toBe(text);
  let pos = 0;
  for (const s of segments) {
    expect(s.start).toBe(pos);
    expect(s.end).toBeGreaterThan(s.start);
    if (s.kind === "think") {
      let inner = s.contentStart;
      for (const c of s.children) {
        expect(c.start).toBe(inner);
        inner = c.end;
      }
      expect(inner).toBe(s.contentEnd);
    }
    pos = s.end;
  }
  expect(pos).toBe(text.length);
}

describe("analyzeAssistantText: plain text and markers", () => {
  it("keeps plain text as one segment", () => {
    const text = "The answer is 42.";
    const a = analyzeAssistantText(text);
    expect(a.segments).toEqual([{ kind: "text", start: 0, end: text.length, text }]);
    expect(a.toolCalls).toEqual([]);
    expect(a.toolCallError).toBeNull();
    expect(a.malformedThinking).toBe(false);
  });

  it("gives nothing for an empty text", () => {
    expect(analyzeAssistantText("").segments).toEqual([]);
  });

  it("picks out ChatML markers", () => {
    const text = "done<|im_end|>";
    const a = analyzeAssistantText(text);
    expect(kinds(a.segments)).toEqual(["text", "marker"]);
    expect(a.segments[1]).toMatchObject({ text: "<|im_end|>", note: null });
    expectCovers(text, a.segments);
  });

  it("flags a stray closing tool-call tag", () => {
    const a = analyzeAssistantText("x</tool_call>y");
    expect(a.segments[1]).toMatchObject({ kind: "marker", text: "</tool_call>", note: expect.stringContaining("without an opening") });
    expect(a.toolCalls).toEqual([]);
  });

  it("markerSegments splits prompts and observations", () => {
    const text = "<|im_start|>user\nhi<|im_end|>\n<tool_response>\nok\n</tool_response>";
    const segs = markerSegments(text);
    expect(segs.filter((s) => s.kind === "marker").map((s) => s.text)).toEqual([
      "<|im_start|>",
      "<|im_end|>",
      "<tool_response>",
      "</tool_response>",
    ]);
    expect(segs.map((s) => s.text).join("")).toBe(text);
  });

  it("does not take a lookalike for a marker", () => {
    const segs = markerSegments("a <| not a marker |> b <|x y|>");
    expect(segs.every((s) => s.kind === "text")).toBe(true);
  });
});

describe("analyzeAssistantText: tool calls", () => {
  it("parses a valid session-tool call and checks its schema", () => {
    const text = 'Let me look.\n<tool_call>\n{"name": "run_shell", "arguments": {"command": "ls"}}\n</tool_call>';
    const a = analyzeAssistantText(text);
    expect(kinds(a.segments)).toEqual(["text", "tool_call"]);
    const c = call(a.segments);
    expect(c.verdict).toEqual({ status: "parsed" });
    expect(c.name).toBe("run_shell");
    expect(c.arguments).toEqual({ command: "ls" });
    expect(c.closed).toBe(true);
    expect(c.schema).toEqual({ known: true, errors: [] });
    expect(c.pretty).toBe(JSON.stringify({ name: "run_shell", arguments: { command: "ls" } }, null, 2));
    expect(c.raw).toBe(text.slice(text.indexOf("<tool_call>")));
    expect(a.toolCallError).toBeNull();
    expectCovers(text, a.segments);
  });

  it("reports schema errors of a known tool", () => {
    const a = analyzeAssistantText('<tool_call>{"name": "write_file", "arguments": {"path": 3}}</tool_call>');
    const c = call(a.segments);
    expect(c.verdict.status).toBe("parsed");
    expect(c.schema?.known).toBe(true);
    expect(c.schema?.errors).toEqual(["$: missing required property 'content'", "$.path: expected string, got integer"]);
  });

  it("says no schema is known for another tool", () => {
    const c = call(analyzeAssistantText('<tool_call>{"name": "calculator", "arguments": {"x": 1}}</tool_call>').segments);
    expect(c.verdict.status).toBe("parsed");
    expect(c.schema).toEqual({ known: false, errors: [] });
  });

  it("checks against a given registry", () => {
    const registry = new ToolRegistry([makeTool("add", "adds", { type: "object", properties: { a: { type: "number" } }, required: ["a"] })]);
    const c = call(analyzeAssistantText('<tool_call>{"name": "add", "arguments": {}}</tool_call>', { registry }).segments);
    expect(c.schema).toEqual({ known: true, errors: ["$: missing required property 'a'"] });
  });

  it("flags non-object arguments of a known tool", () => {
    const c = call(analyzeAssistantText('<tool_call>{"name": "run_shell", "arguments": "ls"}</tool_call>').segments);
    expect(c.schema?.errors).toEqual(["$: expected object arguments, got string"]);
  });

  it("gives the JSON error of an undecodable call, and the turn-level error", () => {
    const text = '<tool_call>{"name": "run_shell", "arguments": {</tool_call>';
    const a = analyzeAssistantText(text);
    const c = call(a.segments);
    expect(c.verdict.status).toBe("json_error");
    expect((c.verdict as { message: string }).message.length).toBeGreaterThan(0);
    expect(c.pretty).toBeNull();
    expect(c.schema).toBeNull();
    expect(a.toolCallError).toMatch(/^tool-call JSON decode error: /);
  });

  it("says which of name and arguments is missing", () => {
    const noArgs = call(analyzeAssistantText('<tool_call>{"name": "run_shell"}</tool_call>').segments);
    expect(noArgs.verdict).toEqual({ status: "missing_name_or_arguments", message: 'no "arguments"' });
    expect(noArgs.pretty).toContain('"run_shell"');
    const neither = call(analyzeAssistantText("<tool_call>{}</tool_call>").segments);
    expect(neither.verdict).toEqual({ status: "missing_name_or_arguments", message: 'no "name" and no "arguments"' });
    const list = call(analyzeAssistantText("<tool_call>[1, 2]</tool_call>").segments);
    expect(list.verdict).toEqual({ status: "missing_name_or_arguments", message: "expected a JSON object, got array" });
    const nul = call(analyzeAssistantText("<tool_call>null</tool_call>").segments);
    expect(nul.verdict).toEqual({ status: "missing_name_or_arguments", message: "expected a JSON object, got null" });
  });

  it("handles an unclosed call running to the end", () => {
    const text = 'ok <tool_call>{"name": "task_complete", "arguments": {}}';
    const a = analyzeAssistantText(text);
    const c = call(a.segments);
    expect(c.closed).toBe(false);
    expect(c.verdict.status).toBe("parsed");
    expect(c.schema).toEqual({ known: true, errors: [] });
    expect(c.end).toBe(text.length);
    expectCovers(text, a.segments);
  });

  it("keeps per-call verdicts when one of several calls is bad (the parser drops the turn)", () => {
    const text =
      '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>\n<tool_call>{oops}</tool_call>';
    const a = analyzeAssistantText(text);
    expect(a.toolCalls.map((c) => c.verdict.status)).toEqual(["parsed", "json_error"]);
    expect(a.toolCalls.map((c) => c.index)).toEqual([0, 1]);
    expect(a.toolCallError).not.toBeNull();
    expectCovers(text, a.segments);
  });

  it("follows the parser on nested calls (lazy match, then a stray close)", () => {
    const text = '<tool_call><tool_call>{"name": "run_shell", "arguments": {"command": "ls"}}</tool_call></tool_call>';
    const a = analyzeAssistantText(text);
    expect(kinds(a.segments)).toEqual(["tool_call", "marker"]);
    const c = call(a.segments);
    expect(c.body.startsWith("<tool_call>")).toBe(true);
    expect(c.verdict.status).toBe("json_error");
    expect(a.segments[1]).toMatchObject({ text: "</tool_call>", note: expect.any(String) });
    expectCovers(text, a.segments);
  });

  it("treats an opening tag inside an unclosed call as part of its body", () => {
    const text = "<tool_call>{<tool_call>";
    const a = analyzeAssistantText(text);
    expect(kinds(a.segments)).toEqual(["tool_call"]);
    expect(call(a.segments).closed).toBe(false);
    expectCovers(text, a.segments);
  });

  it("keeps JSON strings with markup as data", () => {
    const text = '<tool_call>{"name": "write_file", "arguments": {"path": "x.html", "content": "<script>alert(1)</script>"}}</tool_call>';
    const c = call(analyzeAssistantText(text).segments);
    expect(c.verdict.status).toBe("parsed");
    expect(c.schema?.errors).toEqual([]);
    expect(c.pretty).toContain("<script>alert(1)</script>");
  });
});

describe("analyzeAssistantText: thinking", () => {
  it("makes a paired block collapsible content", () => {
    const text = "<think>\nhmm\n</think>\nAnswer: 3";
    const a = analyzeAssistantText(text);
    expect(kinds(a.segments)).toEqual(["think", "text"]);
    const t = think(a.segments);
    expect(t).toMatchObject({ openTag: "<think>", closeTag: "</think>", start: 0 });
    expect(text.slice(t.contentStart, t.contentEnd)).toBe("\nhmm\n");
    expect(t.children).toEqual([{ kind: "text", start: 7, end: 12, text: "\nhmm\n" }]);
    expect(a.malformedThinking).toBe(false);
    expectCovers(text, a.segments);
  });

  it("runs an unclosed block to the end and flags it", () => {
    const text = "a<think>still thinking";
    const a = analyzeAssistantText(text);
    expect(kinds(a.segments)).toEqual(["text", "think"]);
    expect(think(a.segments)).toMatchObject({ closeTag: null, end: text.length });
    expect(a.malformedThinking).toBe(true);
    expectCovers(text, a.segments);
  });

  it("closing_only: everything before the first close is thinking", () => {
    const text = "let me see\n</think>\n42";
    const a = analyzeAssistantText(text, { thinkingStyle: "closing_only" });
    expect(kinds(a.segments)).toEqual(["think", "text"]);
    expect(think(a.segments)).toMatchObject({ openTag: null, closeTag: "</think>", contentStart: 0 });
    expect(a.malformedThinking).toBe(false);
    const paired = analyzeAssistantText(text, { thinkingStyle: "paired" });
    expect(kinds(paired.segments)).toEqual(["text", "marker", "text"]);
    expect(paired.malformedThinking).toBe(true);
  });

  it("closing_only: a second close is stray and malformed", () => {
    const text = "a</think>b</think>c";
    const a = analyzeAssistantText(text, { thinkingStyle: "closing_only" });
    expect(kinds(a.segments)).toEqual(["think", "text", "marker", "text"]);
    expect(a.segments[2]).toMatchObject({ note: expect.stringContaining("without an opening") });
    expect(a.malformedThinking).toBe(true);
    expectCovers(text, a.segments);
  });

  it("marks a nested opening tag inside a block", () => {
    const text = "<think>a<think>b</think>c";
    const a = analyzeAssistantText(text);
    expect(kinds(a.segments)).toEqual(["think", "text"]);
    expect(kinds(think(a.segments).children)).toEqual(["text", "marker", "text"]);
    expect(think(a.segments).children[1]).toMatchObject({ note: "nested opening thinking tag" });
    expect(a.malformedThinking).toBe(true);
    expectCovers(text, a.segments);
  });

  it("shows a tool call made inside a think block within the block", () => {
    const text = '<think>call it: <tool_call>{"name": "task_complete", "arguments": {}}</tool_call></think>done';
    const a = analyzeAssistantText(text);
    expect(kinds(a.segments)).toEqual(["think", "text"]);
    expect(kinds(think(a.segments).children)).toEqual(["text", "tool_call"]);
    expect(a.toolCalls).toHaveLength(1);
    expectCovers(text, a.segments);
  });

  it("ignores thinking tags inside a tool call's body", () => {
    const text = '<tool_call>{"name": "x", "arguments": {"s": "</think><think>"}}</tool_call>';
    const a = analyzeAssistantText(text);
    expect(kinds(a.segments)).toEqual(["tool_call"]);
    expect(call(a.segments).verdict.status).toBe("parsed");
  });

  it("honours custom thinking tags", () => {
    const text = "<reason>r</reason>x";
    const a = analyzeAssistantText(text, { thinkingTags: ["<reason>", "</reason>"] });
    expect(kinds(a.segments)).toEqual(["think", "text"]);
    expect(think(a.segments).openTag).toBe("<reason>");
  });
});

describe("analyzeAssistantText: hostile text stays text", () => {
  const hostile = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(document.cookie)</script>",
    '"><svg onload=alert(1)>',
    "<think><img src=x onerror=alert(1)>",
    "<tool_call><script>",
    "</think></think><think>",
    "<|im_start|><|im_start|>",
    "<tool_call>{\"name\": \"<img src=x onerror=alert(1)>\", \"arguments\": {}}</tool_call>",
    "\u0000\u202e<b>rtl</b>",
  ];
  for (const text of hostile) {
    it(JSON.stringify(text), () => {
      const a = analyzeAssistantText(text);
      expectCovers(text, a.segments);
      // Nothing is invented: each segment's text is a slice of the input.
      for (const s of a.segments) {
        if (s.kind === "text" || s.kind === "marker") expect(s.text).toBe(text.slice(s.start, s.end));
      }
    });
  }

  it("keeps an HTML tag as plain text verbatim", () => {
    const text = "see <img src=x onerror=alert(1)> and <script>x</script>";
    expect(analyzeAssistantText(text).segments).toEqual([{ kind: "text", start: 0, end: text.length, text }]);
  });

  it("reports the hostile name of a tool as data, unknown to the schemas", () => {
    const c = call(analyzeAssistantText('<tool_call>{"name": "<img src=x onerror=alert(1)>", "arguments": {}}</tool_call>').segments);
    expect(c.name).toBe("<img src=x onerror=alert(1)>");
    expect(c.schema).toEqual({ known: false, errors: [] });
  });
});

describe("analyzeAssistantText: coverage property", () => {
  const pieces = ["<tool_call>", "</tool_call>", "<think>", "</think>", "<|im_end|>", '{"name": "run_shell", "arguments": {}}', "{", "}", "x", "\n", " ", "<", ">", "|"];
  it("partitions any text made of tags and JSON", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...pieces), { maxLength: 24 }),
        fc.constantFrom("paired" as const, "closing_only" as const),
        (parts, style) => {
          const text = parts.join("");
          const a = analyzeAssistantText(text, { thinkingStyle: style });
          expectCovers(text, a.segments);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("partitions arbitrary strings", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => {
        expectCovers(text, analyzeAssistantText(text).segments);
      }),
    );
  });
});

describe("firstLines", () => {
  it("keeps short texts whole", () => {
    expect(firstLines("a\nb", 3)).toEqual({ head: "a\nb", hiddenLines: 0, cut: false });
    expect(firstLines("a\nb\nc\n", 3)).toEqual({ head: "a\nb\nc\n", hiddenLines: 0, cut: false });
    expect(firstLines("", 3)).toEqual({ head: "", hiddenLines: 0, cut: false });
  });
  it("cuts after the given number of lines", () => {
    expect(firstLines("1\n2\n3\n4\n5", 2)).toEqual({ head: "1\n2", hiddenLines: 3, cut: true });
  });
  it("cuts a long line at the character limit, counting it as hidden", () => {
    expect(firstLines("abcdef\nxyz", 5, 4)).toEqual({ head: "abcd", hiddenLines: 2, cut: true });
    expect(firstLines("ab\ncdef", 5, 5)).toEqual({ head: "ab\ncd", hiddenLines: 1, cut: true });
  });
});
