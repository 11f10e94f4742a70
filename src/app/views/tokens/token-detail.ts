/**
 * The token view's per-token detail, without React: which tokens are trained and why, where a log position is, how
 * the keyboard moves between the chips drawn, and what a pinned token's detail says about its sampling.
 */

import type { Message, TokenStepDetail } from "../../../core/index.js";
import { logprobsView } from "../../run/compact-messages.js";
import { tokenDetailAt, type SampleView, type TurnView } from "../../run/run-model.js";
import type { MessageSpan } from "./tokens.js";

/**
 * Whether a message's tokens are trained: in this lab, as in the reference's loss masking, the tokens of assistant
 * messages that carry `generation_logprobs` (upstream-rollouts.md, "Loss masking"); prompts and observations are not.
 */
export function isTrained(message: Message): boolean {
  return message.role === "assistant" && logprobsView(message) !== undefined;
}

/** A token's trained mark, with why. */
export function trainedWhy(span: Pick<MessageSpan, "kind" | "message">): { trained: boolean; why: string } {
  if (isTrained(span.message)) return { trained: true, why: "an assistant message the policy generated: it carries generation_logprobs" };
  if (span.kind === "prompt") return { trained: false, why: "a prompt token: the dataset's messages are context, never trained" };
  if (span.kind === "environment") return { trained: false, why: "an environment observation: context for the next turn, never trained" };
  return { trained: false, why: "an assistant message without generation_logprobs" };
}

/** A message's label in the log: "prompt (user)", "turn 1 assistant", "turn 1 environment". */
export function spanLabel(span: Pick<MessageSpan, "kind" | "message" | "turn">): string {
  if (span.kind === "prompt" || span.turn === null) return `prompt (${span.message.role})`;
  return `turn ${span.turn} ${span.message.role}`;
}

/** The span holding log position `pos` and the token's index in it (null past the log). */
export function spanAt<S extends Pick<MessageSpan, "offset" | "message">>(spans: readonly S[], counts: readonly number[], pos: number): { span: S; index: number; at: number } | null {
  let lo = 0;
  let hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (spans[mid]!.offset <= pos) lo = mid + 1;
    else hi = mid;
  }
  // The last span starting at or before `pos` that holds it (empty messages share their offset with the next).
  for (let at = lo - 1; at >= 0; at--) {
    const span = spans[at]!;
    if (pos - span.offset < counts[at]!) return { span, index: pos - span.offset, at };
    if (counts[at]! > 0) return null;
  }
  return null;
}

export type ChipMove = "next" | "previous" | "first" | "last" | "next message" | "previous message";

/** The key's move among the chips (null: the chips do not take it). */
export function chipMoveFor(key: string): ChipMove | null {
  switch (key) {
    case "ArrowRight":
      return "next";
    case "ArrowLeft":
      return "previous";
    case "ArrowDown":
      return "next message";
    case "ArrowUp":
      return "previous message";
    case "Home":
      return "first";
    case "End":
      return "last";
    default:
      return null;
  }
}

/**
 * Where a move from the chip at `pos` lands, among the chips drawn (message i draws `shown[i]` chips from
 * `offsets[i]`; a collapsed message draws none): null when there is nowhere to go.
 */
export function moveChip(offsets: readonly number[], shown: readonly number[], pos: number | null, move: ChipMove): number | null {
  const drawn: number[] = [];
  for (let i = 0; i < offsets.length; i++) if (shown[i]! > 0) drawn.push(i);
  if (drawn.length === 0) return null;
  const first = offsets[drawn[0]!]!;
  const lastMessage = drawn.at(-1)!;
  const last = offsets[lastMessage]! + shown[lastMessage]! - 1;
  if (move === "first") return first;
  if (move === "last") return last;
  const here = pos === null ? -1 : drawn.findIndex((i) => pos >= offsets[i]! && pos < offsets[i]! + shown[i]!);
  if (here < 0) return first;
  const m = drawn[here]!;
  switch (move) {
    case "next":
      if (pos! + 1 < offsets[m]! + shown[m]!) return pos! + 1;
      return here + 1 < drawn.length ? offsets[drawn[here + 1]!]! : null;
    case "previous":
      if (pos! > offsets[m]!) return pos! - 1;
      return here > 0 ? offsets[drawn[here - 1]!]! + shown[drawn[here - 1]!]! - 1 : null;
    case "next message":
      return here + 1 < drawn.length ? offsets[drawn[here + 1]!]! : null;
    case "previous message":
      // To the start of this message first, then to the previous one's.
      if (pos! > offsets[m]!) return offsets[m]!;
      return here > 0 ? offsets[drawn[here - 1]!]! : null;
  }
}

/** The turn a message of the sample was generated in (null for prompt and observations, or a turn not found). */
export function generatingTurn(sample: Pick<SampleView, "turns">, span: Pick<MessageSpan, "index" | "turn">): TurnView | null {
  if (span.turn === null) return null;
  const turn = sample.turns[span.turn];
  return turn && turn.assistantIndex === span.index ? turn : null;
}

/** What a pinned token's detail says of its sampling. */
export type SamplingDetail =
  | { kind: "not generated"; why: string }
  | { kind: "not sampled"; why: string; alternatives: string }
  | {
      kind: "sampled";
      /** Undefined when the message has none (an import without them). */
      logprob: number | undefined;
      /** The step's entropy and top alternatives; null with `missing` saying why. */
      step: TokenStepDetail | null;
      missing: string | null;
      /** Where the chosen token is among the alternatives (null: not among them). */
      chosenRank: number | null;
    };

/** Why a sampled run's token has no alternatives: said plainly (never an empty list). */
export const NO_ALTERNATIVES_KEPT =
  "no alternatives recorded: a model run's entropy and alternatives are kept only by the page that ran it, while it shows the run (a saved, imported or recovered run holds the tokens and their log-probabilities only)";

/** The sampling detail of token `index` of a span of `sample`; `sampled`: the policy drew its tokens (a model). */
export function samplingDetail(
  sample: Pick<SampleView, "turns">,
  span: Pick<MessageSpan, "kind" | "message" | "index" | "turn">,
  index: number,
  tokenId: number,
  sampled: boolean,
): SamplingDetail {
  if (span.kind !== "generated") {
    return { kind: "not generated", why: `none: ${span.kind === "prompt" ? "a prompt" : "an environment"} token is not generated (no log-probability, entropy or alternatives)` };
  }
  if (!sampled) {
    return {
      kind: "not sampled",
      why: "none: this policy writes its responses, it does not sample them (the zeros in its result are placeholders)",
      alternatives: "no alternatives recorded: a text policy (oracle, scripted, replay, human) has no distribution to draw from",
    };
  }
  const logprob = logprobsView(span.message)?.[index];
  const turn = generatingTurn(sample, span);
  const details = turn?.tokenDetails;
  const step = details ? tokenDetailAt(details, index) : null;
  let missing: string | null = null;
  if (!step) {
    if (turn?.tokenDetailsMissing) missing = `no alternatives recorded: ${turn.tokenDetailsMissing}`;
    else if (details) missing = "no alternatives recorded for this token";
    else missing = NO_ALTERNATIVES_KEPT;
  }
  const rank = step ? step.top.findIndex((t) => t.tokenId === tokenId) : -1;
  return { kind: "sampled", logprob, step, missing, chosenRank: rank >= 0 ? rank : null };
}

/** A token's text as a string literal: every escape visible (`\n`, `\t`, `\u0000`), quotes included. */
export function escapedText(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\u009f\u00a0\u00ad\u200b-\u200f\u2028\u2029\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A log-probability in four decimals (−∞ and NaN as they are). */
export function formatLogprob(lp: number): string {
  return Number.isFinite(lp) ? lp.toFixed(4) : String(lp);
}
