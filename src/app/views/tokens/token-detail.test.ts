import { describe, expect, it } from "vitest";
import { byteLevelTokenizer, type Message } from "../../../core/index.js";
import { packTokenDetails } from "../../run/compact-messages.js";
import type { TurnView } from "../../run/run-model.js";
import {
  chipMoveFor,
  escapedText,
  isTrained,
  moveChip,
  NO_ALTERNATIVES_KEPT,
  samplingDetail,
  spanAt,
  spanLabel,
  trainedWhy,
} from "./token-detail.js";
import { messageSpans } from "./tokens.js";

const msg = (role: string, content: string, extra: Partial<Message> = {}): Message => ({ role, content, token_ids: byteLevelTokenizer.encode(content), ...extra });

const turn = (n: number, assistantIndex: number | null, observationIndex: number | null, extra: Partial<TurnView> = {}): TurnView => ({
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
  ...extra,
});

const sample = (turns: TurnView[]) => {
  const messages = [msg("user", "hi"), msg("assistant", "yo", { generation_logprobs: [-0.25, -2] }), msg("environment", "ok!")];
  return { messages, promptMessages: 1, turns };
};

describe("trained tokens", () => {
  it("are an assistant message's that carries generation_logprobs, and nothing else", () => {
    const s = sample([turn(0, 1, 2)]);
    const spans = messageSpans(s);
    expect(spans.map((x) => isTrained(x.message))).toEqual([false, true, false]);
    expect(spans.map((x) => trainedWhy(x).trained)).toEqual([false, true, false]);
    expect(trainedWhy(spans[0]!).why).toMatch(/prompt/);
    expect(trainedWhy(spans[2]!).why).toMatch(/environment/);
    expect(trainedWhy({ kind: "generated", message: msg("assistant", "x") })).toEqual({ trained: false, why: "an assistant message without generation_logprobs" });
    expect(spans.map(spanLabel)).toEqual(["prompt (user)", "turn 0 assistant", "turn 0 environment"]);
  });
});

describe("spanAt", () => {
  it("finds the message and index of a log position", () => {
    const spans = messageSpans(sample([turn(0, 1, 2)]));
    const sizes = spans.map((x) => x.message.token_ids.length);
    expect(spanAt(spans, sizes, 0)).toMatchObject({ at: 0, index: 0 });
    expect(spanAt(spans, sizes, 2)).toMatchObject({ at: 1, index: 0 });
    expect(spanAt(spans, sizes, 6)).toMatchObject({ at: 2, index: 2 });
    expect(spanAt(spans, sizes, 7)).toBeNull();
  });
});

describe("chip moves (a roving tab stop over the chips drawn)", () => {
  // Three messages at offsets 0, 10, 14: the first collapsed (no chips drawn), then 4 and 3 chips.
  const offsets = [0, 10, 14];
  const shown = [0, 4, 3];
  it("steps over collapsed messages, to the ends and by message", () => {
    expect(moveChip(offsets, shown, null, "first")).toBe(10);
    expect(moveChip(offsets, shown, 10, "next")).toBe(11);
    expect(moveChip(offsets, shown, 13, "next")).toBe(14);
    expect(moveChip(offsets, shown, 16, "next")).toBeNull();
    expect(moveChip(offsets, shown, 14, "previous")).toBe(13);
    expect(moveChip(offsets, shown, 10, "previous")).toBeNull();
    expect(moveChip(offsets, shown, 11, "next message")).toBe(14);
    expect(moveChip(offsets, shown, 15, "previous message")).toBe(14);
    expect(moveChip(offsets, shown, 14, "previous message")).toBe(10);
    expect(moveChip(offsets, shown, 11, "last")).toBe(16);
    // From a chip no longer drawn (its message collapsed since): the first drawn.
    expect(moveChip(offsets, shown, 3, "next")).toBe(10);
    expect(moveChip([0], [0], null, "first")).toBeNull();
  });
  it("takes the arrows, Home and End; nothing else", () => {
    expect(["ArrowRight", "ArrowLeft", "ArrowDown", "ArrowUp", "Home", "End"].map(chipMoveFor)).toEqual([
      "next",
      "previous",
      "next message",
      "previous message",
      "first",
      "last",
    ]);
    expect(chipMoveFor("j")).toBeNull();
    expect(chipMoveFor("Enter")).toBeNull();
  });
});

describe("samplingDetail", () => {
  const detail = (id: number) => ({ entropy: 1.5, top: [{ tokenId: id + 1, logprob: -0.1, text: "a" }, { tokenId: id, logprob: -0.25, text: "b" }] });

  it("a text policy's generated token: no log-probability and, plainly, no alternatives", () => {
    const s = sample([turn(0, 1, 2)]);
    const d = samplingDetail(s, messageSpans(s)[1]!, 0, 121, false);
    expect(d).toMatchObject({ kind: "not sampled" });
    expect(d.kind === "not sampled" && d.alternatives).toMatch(/^no alternatives recorded: a text policy/);
  });

  it("a prompt or observation token is not generated", () => {
    const s = sample([turn(0, 1, 2)]);
    expect(samplingDetail(s, messageSpans(s)[0]!, 0, 104, true)).toMatchObject({ kind: "not generated" });
    expect(samplingDetail(s, messageSpans(s)[2]!, 0, 111, true)).toMatchObject({ kind: "not generated" });
  });

  it("a model's token: its log-probability, and the recorded step with the chosen token's rank", () => {
    const ids = byteLevelTokenizer.encode("yo");
    const details = packTokenDetails([detail(ids[0]!), detail(ids[1]!)], new Map())!;
    const s = sample([turn(0, 1, 2, { tokenDetails: details })]);
    const d = samplingDetail(s, messageSpans(s)[1]!, 1, ids[1]!, true);
    expect(d).toEqual({ kind: "sampled", logprob: -2, step: detail(ids[1]!), missing: null, chosenRank: 1 });
  });

  it("a model's token without a recorded step says why (a saved or imported run; a turn whose stream did not match)", () => {
    const plain = sample([turn(0, 1, 2)]);
    expect(samplingDetail(plain, messageSpans(plain)[1]!, 0, 121, true)).toMatchObject({ kind: "sampled", logprob: -0.25, step: null, missing: NO_ALTERNATIVES_KEPT });
    const lost = sample([turn(0, 1, 2, { tokenDetailsMissing: "the tokens streamed in this turn are not the message's tokens" })]);
    expect(samplingDetail(lost, messageSpans(lost)[1]!, 0, 121, true)).toMatchObject({ missing: "no alternatives recorded: the tokens streamed in this turn are not the message's tokens" });
  });
});

describe("escapedText", () => {
  it("shows every escape and leaves markup as text", () => {
    expect(escapedText("a\n\t\u0000")).toBe('"a\\n\\t\\u0000"');
    expect(escapedText("\u00a0\u2028")).toBe('"\\u00a0\\u2028"');
    expect(escapedText("<b>x</b>")).toBe('"<b>x</b>"');
  });
});
