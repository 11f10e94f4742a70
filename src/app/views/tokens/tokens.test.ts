import { describe, expect, it } from "vitest";
import { byteLevelTokenizer, chatPrompt, type Message } from "../../../core/index.js";
import type { TurnView } from "../../run/run-model.js";
import { referenceFor } from "../../../scenario/token-check.js";
import { byteLevelCheckTokenizer } from "../token-check-view.js";
import {
  CHIP_PAGE,
  compareWithTemplate,
  decodeTokens,
  legendStops,
  logprobColor,
  logprobPosition,
  logprobSummary,
  messageSpans,
  tokenTitle,
  visibleChipCount,
  visibleText,
} from "./tokens.js";

const msg = (role: string, content: string, extra: Partial<Message> = {}): Message => ({
  role,
  content,
  token_ids: byteLevelTokenizer.encode(content),
  ...extra,
});

const turn = (n: number, assistantIndex: number | null, observationIndex: number | null): TurnView => ({
  turn: n,
  genStart: 0,
  genEnd: null,
  envEnd: null,
  inputTokens: 0,
  streamed: "",
  streamedTokens: 0,
  assistantIndex,
  observationIndex,
  responseTruncated: false,
  reward: null,
  rewardComponents: null,
  terminated: false,
  truncatedContext: false,
  violations: [],
  metadata: null,
});

describe("visibleText", () => {
  it("makes whitespace visible", () => {
    expect(visibleText("a b\n")).toBe("a·b↵");
    expect(visibleText("\t\r")).toBe("→␍");
    expect(visibleText("")).toBe("∅");
  });
  it("shows control characters as their pictures", () => {
    expect(visibleText("\u0000\u001b\u007f")).toBe("␀␛␡");
  });
  it("leaves markup as text", () => {
    expect(visibleText("<img src=x onerror=alert(1)>")).toBe("<img·src=x·onerror=alert(1)>");
  });
});

describe("log-probability colours", () => {
  it("runs from green at 0 to red at the floor", () => {
    expect(logprobPosition(0)).toBe(0);
    expect(logprobPosition(-3)).toBe(0.5);
    expect(logprobPosition(-100)).toBe(1);
    expect(logprobPosition(Number.NEGATIVE_INFINITY)).toBe(1);
    expect(logprobPosition(Number.NaN)).toBe(1);
    expect(logprobColor(0)).toBe("hsl(120 70% 82%)");
    expect(logprobColor(-6)).toBe("hsl(0 70% 82%)");
    expect(logprobColor(-3)).toBe("hsl(60 70% 82%)");
  });
  it("has a legend from certain to unlikely", () => {
    const stops = legendStops();
    expect(stops[0]).toMatchObject({ logprob: 0, probability: 1 });
    expect(stops.at(-1)!.color).toBe("hsl(0 70% 82%)");
  });
});

describe("tokenTitle", () => {
  it("gives id, text, logprob and probability", () => {
    expect(tokenTitle(65, "A", Math.log(0.5), false)).toBe('id 65\ntext "A"\nlogprob -0.6931\np 0.500');
  });
  it("marks special tokens and leaves out logprobs of prompt tokens", () => {
    expect(tokenTitle(258, "<|im_end|>", undefined, true)).toBe('id 258 (special)\ntext "<|im_end|>"');
  });
  it("writes tiny probabilities in exponent form", () => {
    expect(tokenTitle(1, "x", -12, false)).toContain("p 6.14e-6");
  });
});

describe("messageSpans", () => {
  it("tells prompt, generated and environment spans apart, with turns and offsets", () => {
    const messages = [msg("user", "hi"), msg("assistant", "yo", { generation_logprobs: [0, 0] }), msg("environment", "ok!")];
    const spans = messageSpans({ messages, promptMessages: 1, turns: [turn(0, 1, 2)] });
    expect(spans.map((s) => [s.kind, s.turn, s.offset])).toEqual([
      ["prompt", null, 0],
      ["generated", 0, 2],
      ["environment", 0, 4],
    ]);
  });
  it("keeps an assistant message of the prompt in the prompt", () => {
    const spans = messageSpans({ messages: [msg("system", "s"), msg("assistant", "few-shot")], promptMessages: 2, turns: [] });
    expect(spans.map((s) => s.kind)).toEqual(["prompt", "prompt"]);
  });
});

describe("logprobSummary", () => {
  it("summarises", () => {
    expect(logprobSummary([-1, -3])).toEqual({ count: 2, mean: -2, min: -3 });
    expect(logprobSummary([])).toBeNull();
    expect(logprobSummary(undefined)).toBeNull();
  });
});

describe("decodeTokens", () => {
  it("uses the tokenizer's decode when there is one", () => {
    const ids = byteLevelTokenizer.encode("héllo → <|im_end|>");
    expect(decodeTokens(ids, byteLevelTokenizer)).toBe("héllo → <|im_end|>");
  });
  it("joins token texts, decoding byte tokens as UTF-8, without one", () => {
    const tokenizer = { tokenText: (id: number) => byteLevelTokenizer.tokenText(id), isSpecial: () => false };
    const ids = byteLevelTokenizer.encode("héllo → <think>");
    expect(decodeTokens(ids, tokenizer)).toBe("héllo → <think>");
  });
  it("decodes an empty sequence", () => {
    expect(decodeTokens([], byteLevelTokenizer)).toBe("");
  });
});

describe("visibleChipCount", () => {
  it("draws whole pages", () => {
    expect(visibleChipCount(5000, 1)).toBe(CHIP_PAGE);
    expect(visibleChipCount(5000, 3)).toBe(5000);
    expect(visibleChipCount(10, 1)).toBe(10);
  });
});

describe("compareWithTemplate", () => {
  // The reference is the token check's (src/scenario/token-check.ts), as the panel passes it.
  const reference = (messages: Message[], structured = false) => referenceFor({ messageLog: messages, structured }, byteLevelCheckTokenizer).text;

  it("finds a log whose tokens decode to the template's rendering equal", () => {
    const messages = [msg("user", "2+2?"), msg("assistant", "4")];
    const rendered = reference(messages);
    const tokenizer = { tokenText: () => "", isSpecial: () => false, decode: () => rendered };
    const c = compareWithTemplate(messages, tokenizer, rendered);
    expect(c).toEqual({ template: rendered, decoded: rendered, diff: { equal: true, hunks: [], coarse: false } });
  });

  it("reads an already-rendered prompt back (not wrapped twice); an unstructured observation is no chat turn", () => {
    const prompt = chatPrompt("2+2?", null);
    const messages = [msg("user", prompt), msg("assistant", "4<|im_end|>", { generation_logprobs: [0, 0] }), msg("environment", "right")];
    const c = compareWithTemplate(messages, byteLevelTokenizer, reference(messages));
    expect(c.decoded).toBe(`${prompt}4<|im_end|>right`);
    expect(c.template.startsWith(`${prompt}4<|im_end|>\n<|im_start|>user\nright`)).toBe(true);
    expect(c.diff.equal).toBe(false);
    // The first difference is after the assistant turn: the template's newline and user header before the observation.
    const first = c.diff.hunks[0]!;
    expect(first.aStart).toBe(`${prompt}4<|im_end|>`.length);
    expect(c.diff.coarse).toBe(false);
  });
});
