/**
 * Two samples (of one run, or of two runs) aligned turn by turn, and where they first part.
 *
 * A row is the prompt (every message before the first assistant message) or one turn: the assistant message and
 * the environment's observation that follows it, with the turn's reward and flags. Rows are aligned by turn index
 * (turn k of A beside turn k of B: both started from the same kind of context), so the comparison is linear in
 * the number of turns. Within a row, differing texts are diffed with the lab's text diff (`diffText`, the one the
 * token view uses) for the highlighted spans, and the first differing character is located with the regression
 * runner's `firstDifference` / `charDiff`, so the lab and `npm run regress` agree on where texts part.
 *
 * Pure: no DOM, no store; the view renders what this returns.
 */

import type { Message, Violation } from "../../core/index.js";
import { charDiff, DEFAULT_FLOAT_TOLERANCE, firstDifference, type TextWindow } from "../../regress/compare.js";
import type { SampleView } from "../run/run-model.js";
import { TERMINATION_WORDS } from "../termination.js";
import { diffText, type TextDiff } from "../views/tokens/diff.js";

/** One side's turn, as the comparison needs it. */
export interface SideTurn {
  assistant: Message | null;
  observation: Message | null;
  reward: number | null;
  rewardComponents: Record<string, number> | null;
  terminated: boolean;
  truncatedContext: boolean;
  responseTruncated: boolean;
  violations: readonly Violation[];
}

/** One side of a comparison: a sample's prompt, turns and ending. */
export interface SideSample {
  prompt: readonly Message[];
  /** By turn index; a hole is a turn that has not started (live runs). */
  turns: readonly (SideTurn | null | undefined)[];
  totalReward: number;
  termination: string | null;
  error: string | null;
  /** False while the sample still runs. */
  done: boolean;
}

/** A run model's sample as a comparison side. */
export function sideSample(s: SampleView): SideSample {
  return {
    prompt: s.messages.slice(0, s.promptMessages),
    turns: s.turns.map((t) =>
      t
        ? {
            assistant: t.assistantIndex === null ? null : (s.messages[t.assistantIndex] ?? null),
            observation: t.observationIndex === null ? null : (s.messages[t.observationIndex] ?? null),
            reward: t.reward,
            rewardComponents: t.rewardComponents,
            terminated: t.terminated,
            truncatedContext: t.truncatedContext,
            responseTruncated: t.responseTruncated,
            violations: t.violations.length ? t.violations : (t.assistantIndex !== null ? (s.messages[t.assistantIndex]?.invalid_action_violations ?? []) : []),
          }
        : null,
    ),
    totalReward: s.totalReward,
    termination: s.termination,
    error: s.error,
    done: s.state === "done",
  };
}

/** What can differ, in the order the first divergence is looked for within a row. */
export type DiffField =
  | "prompt length"
  | "prompt role"
  | "prompt text"
  | "prompt tokens"
  | "turn only in A"
  | "turn only in B"
  | "assistant text"
  | "assistant tokens"
  | "assistant logprobs"
  | "response truncated"
  | "violations"
  | "observation role"
  | "observation text"
  | "observation tokens"
  | "reward"
  | "reward components"
  | "termination"
  | "context truncated"
  | "ending"
  | "total reward"
  | "error";

export interface Difference {
  field: DiffField;
  /** A short description: "+1 vs 0", "token 12: 104 vs 105", "char 7". */
  detail: string;
}

export type SlotKind = "prompt" | "assistant" | "observation";

/** The first differing character of two texts (UTF-16 index), with a window of text around it on each side. */
export interface FirstChar {
  position: number;
  a: TextWindow;
  b: TextWindow;
}

/** Where two texts first differ (the regression runner's `charDiff`, named by side). */
export function firstChar(a: string, b: string, radius = 40): FirstChar | null {
  if (a === b) return null;
  const d = charDiff(a, b, radius);
  return { position: d.position, a: d.run, b: d.golden };
}

/** Two messages in the same place of a row (either may be missing). */
export interface MessagePair {
  kind: SlotKind;
  a: Message | null;
  b: Message | null;
  /** The highlighted spans, when both are there and their texts differ. */
  diff: TextDiff | null;
  /** The first differing character and a window around it, when the texts differ. */
  firstChar: FirstChar | null;
}

export interface AlignedRow {
  /** Null for the prompt row. */
  turn: number | null;
  pairs: MessagePair[];
  /** The turn on each side (null on the prompt row, or where that side has no such turn). */
  a: SideTurn | null;
  b: SideTurn | null;
  /** Every difference of the row, in the order above. */
  differences: Difference[];
}

export interface FirstDivergence {
  /** Index into `rows`; null when the rows agree and only the endings differ. */
  row: number | null;
  /** The turn (null at the prompt or at the ending). */
  turn: number | null;
  where: "prompt" | "turn" | "ending";
  field: DiffField;
  detail: string;
  /** The text window around the first differing character, when the divergence is in a text. */
  text: FirstChar | null;
}

export interface SampleComparison {
  rows: AlignedRow[];
  /** Differences of how the samples ended (termination, total reward, error). */
  ending: Difference[];
  first: FirstDivergence | null;
  /** One line: "identical" or "first divergence at turn 3: assistant text", plus the endings. */
  summary: string;
}

export interface CompareSamplesOptions {
  /**
   * The largest |Δ| of a generation log-probability still taken as equal; default the regression runner's float
   * tolerance (1e-3): the same tokens computed in another batch, on another backend or CPU differ in their last
   * digits, which is no divergence (a fork re-run of a model run differs by ~2e-6). 0: exact.
   */
  logprobTolerance?: number;
}

const fmt = (x: number | null): string => {
  if (x === null) return "none";
  if (Number.isInteger(x)) return x > 0 ? `+${x}` : String(x);
  const s = Number(x.toPrecision(4)).toString();
  return x > 0 ? `+${s}` : s;
};

const ending = (s: SideSample): string =>
  s.termination !== null ? (TERMINATION_WORDS[s.termination] ?? s.termination) : s.done ? "no termination" : "still running";

const sameList = (a: readonly number[], b: readonly number[]): number => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
};

const violationKey = (v: Violation) => `${v.type}|${v.severity}|${v.locus}|${v.detail ?? ""}`;

/** The message pair of one slot, with its text diff. */
function pair(kind: SlotKind, a: Message | null, b: Message | null): MessagePair {
  const differs = a !== null && b !== null && a.content !== b.content;
  return {
    kind,
    a,
    b,
    diff: differs ? diffText(a.content, b.content) : null,
    firstChar: differs ? firstChar(a.content, b.content) : null,
  };
}

/** Differences between two messages of a slot (`label` names it: "prompt", "assistant", "observation"). */
function messageDifferences(label: "prompt" | "assistant" | "observation", a: Message, b: Message, options: CompareSamplesOptions): Difference[] {
  const out: Difference[] = [];
  if (a.role !== b.role && label !== "assistant") out.push({ field: `${label} role` as DiffField, detail: `${a.role} vs ${b.role}` });
  if (a.content !== b.content) {
    const at = firstDifference(a.content, b.content);
    out.push({ field: `${label} text` as DiffField, detail: `char ${at}` });
  } else if (a.token_ids.length && b.token_ids.length) {
    // Same text, other tokens: a different tokenization of the same characters.
    const at = sameList(a.token_ids, b.token_ids);
    if (at >= 0) out.push({ field: `${label} tokens` as DiffField, detail: `token ${at}: ${a.token_ids[at] ?? "end"} vs ${b.token_ids[at] ?? "end"}` });
  }
  if (label === "assistant" && a.generation_logprobs && b.generation_logprobs && sameList(a.token_ids, b.token_ids) < 0) {
    const tolerance = options.logprobTolerance ?? DEFAULT_FLOAT_TOLERANCE;
    let worst = -1;
    let delta = 0;
    const la = a.generation_logprobs;
    const lb = b.generation_logprobs;
    for (let i = 0; i < Math.min(la.length, lb.length); i++) {
      const d = Math.abs(la[i]! - lb[i]!);
      if (d > tolerance && d > delta) {
        worst = i;
        delta = d;
      }
    }
    if (la.length !== lb.length) out.push({ field: "assistant logprobs", detail: `${la.length} vs ${lb.length} values` });
    else if (worst >= 0) out.push({ field: "assistant logprobs", detail: `max |Δ| ${delta.toPrecision(3)} at token ${worst}` });
  }
  return out;
}

function promptRow(a: SideSample, b: SideSample, options: CompareSamplesOptions): AlignedRow {
  const n = Math.max(a.prompt.length, b.prompt.length);
  const pairs: MessagePair[] = [];
  const differences: Difference[] = [];
  if (a.prompt.length !== b.prompt.length) differences.push({ field: "prompt length", detail: `${a.prompt.length} vs ${b.prompt.length} messages` });
  for (let i = 0; i < n; i++) {
    const ma = a.prompt[i] ?? null;
    const mb = b.prompt[i] ?? null;
    pairs.push(pair("prompt", ma, mb));
    if (ma && mb) {
      for (const d of messageDifferences("prompt", ma, mb, options)) differences.push({ ...d, detail: n > 1 ? `message ${i}, ${d.detail}` : d.detail });
    }
  }
  return { turn: null, pairs, a: null, b: null, differences };
}

function turnRow(turn: number, ta: SideTurn | null, tb: SideTurn | null, options: CompareSamplesOptions): AlignedRow {
  const pairs = [pair("assistant", ta?.assistant ?? null, tb?.assistant ?? null), pair("observation", ta?.observation ?? null, tb?.observation ?? null)];
  const differences: Difference[] = [];
  if (!ta || !tb) {
    if (ta || tb) differences.push({ field: ta ? "turn only in A" : "turn only in B", detail: `${ta ? "B" : "A"} has no turn ${turn}` });
    return { turn, pairs, a: ta, b: tb, differences };
  }
  const missing = (field: DiffField, ma: Message | null, mb: Message | null) => {
    if (ma && !mb) differences.push({ field, detail: "only in A" });
    else if (!ma && mb) differences.push({ field, detail: "only in B" });
  };
  if (ta.assistant && tb.assistant) differences.push(...messageDifferences("assistant", ta.assistant, tb.assistant, options));
  else missing("assistant text", ta.assistant, tb.assistant);
  if (ta.responseTruncated !== tb.responseTruncated) differences.push({ field: "response truncated", detail: `${ta.responseTruncated ? "yes" : "no"} vs ${tb.responseTruncated ? "yes" : "no"}` });
  const va = ta.violations.map(violationKey).join(",");
  const vb = tb.violations.map(violationKey).join(",");
  if (va !== vb) {
    const names = (vs: readonly Violation[]) => (vs.length ? vs.map((v) => v.type).join(", ") : "none");
    differences.push({ field: "violations", detail: `${names(ta.violations)} vs ${names(tb.violations)}` });
  }
  if (ta.observation && tb.observation) differences.push(...messageDifferences("observation", ta.observation, tb.observation, options));
  else missing("observation text", ta.observation, tb.observation);
  if (ta.reward !== tb.reward) differences.push({ field: "reward", detail: `${fmt(ta.reward)} vs ${fmt(tb.reward)}` });
  else if (JSON.stringify(ta.rewardComponents) !== JSON.stringify(tb.rewardComponents)) differences.push({ field: "reward components", detail: "same reward, other components" });
  if (ta.terminated !== tb.terminated) differences.push({ field: "termination", detail: `${ta.terminated ? "terminated" : "goes on"} vs ${tb.terminated ? "terminated" : "goes on"}` });
  if (ta.truncatedContext !== tb.truncatedContext) differences.push({ field: "context truncated", detail: `${ta.truncatedContext ? "yes" : "no"} vs ${tb.truncatedContext ? "yes" : "no"}` });
  return { turn, pairs, a: ta, b: tb, differences };
}

/** Aligns two samples turn by turn and finds where they first part. */
export function compareSamples(a: SideSample, b: SideSample, options: CompareSamplesOptions = {}): SampleComparison {
  const rows: AlignedRow[] = [promptRow(a, b, options)];
  const turns = Math.max(a.turns.length, b.turns.length);
  for (let t = 0; t < turns; t++) rows.push(turnRow(t, a.turns[t] ?? null, b.turns[t] ?? null, options));

  const endingDiffs: Difference[] = [];
  if (a.termination !== b.termination || a.done !== b.done) endingDiffs.push({ field: "ending", detail: `${ending(a)} vs ${ending(b)}` });
  if (a.totalReward !== b.totalReward) endingDiffs.push({ field: "total reward", detail: `${fmt(a.totalReward)} vs ${fmt(b.totalReward)}` });
  if (a.error !== b.error) endingDiffs.push({ field: "error", detail: `${a.error ?? "none"} vs ${b.error ?? "none"}` });

  let first: FirstDivergence | null = null;
  const rowIndex = rows.findIndex((r) => r.differences.length > 0);
  if (rowIndex >= 0) {
    const row = rows[rowIndex]!;
    const d = row.differences[0]!;
    const slot = d.field.startsWith("prompt") ? "prompt" : d.field.startsWith("assistant") ? "assistant" : d.field.startsWith("observation") ? "observation" : null;
    const textPair = d.field.endsWith(" text") ? row.pairs.find((p) => p.kind === slot && p.firstChar) : undefined;
    first = {
      row: rowIndex,
      turn: row.turn,
      where: row.turn === null ? "prompt" : "turn",
      field: d.field,
      detail: d.detail,
      text: textPair?.firstChar ?? null,
    };
  } else if (endingDiffs.length) {
    first = { row: null, turn: null, where: "ending", field: endingDiffs[0]!.field, detail: endingDiffs[0]!.detail, text: null };
  }

  return { rows, ending: endingDiffs, first, summary: summarize(a, b, first, rows.length - 1) };
}

function summarize(a: SideSample, b: SideSample, first: FirstDivergence | null, turns: number): string {
  const live = [!a.done && "A still running", !b.done && "B still running"].filter(Boolean).join(", ");
  const tail = live ? ` (${live})` : "";
  if (!first) return `identical: ${turns} ${turns === 1 ? "turn" : "turns"}, same texts, rewards and ending${tail}`;
  const where = first.where === "prompt" ? "the prompt" : first.where === "ending" ? "the ending" : `turn ${first.turn}`;
  const endings =
    a.termination === b.termination && a.totalReward === b.totalReward
      ? `both ${ending(a)}, total reward ${fmt(a.totalReward)}`
      : `A ${ending(a)}, total reward ${fmt(a.totalReward)}; B ${ending(b)}, total reward ${fmt(b.totalReward)}`;
  return `first divergence at ${where}: ${first.field} (${first.detail}) · ${endings}${tail}`;
}
