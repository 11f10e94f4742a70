/**
 * Pure helpers shared by the batch overview and the timeline: what state each turn cell is in, the spans of a
 * sample's lane, and the words and glyphs the legends use. Colours live in views.css (`.rs-<kind>` classes).
 */

import type { Metadata, TerminationReason } from "../../../core/index.js";
import type { RunModel, SampleView } from "../../run/run-model.js";
import { TERMINATION_WORDS } from "../../termination.js";

/** A turn cell: a turn still to come, one in progress or done, or a sample's last turn, by how it ended. */
export type CellKind = "pending" | "generating" | "environment" | "ok" | TerminationReason;

export interface LegendEntry {
  kind: CellKind;
  label: string;
  /** The label where a legend has one line for it (the full label is its title). */
  short: string;
  /** Drawn inside the cell so a state reads without its colour. */
  glyph: string;
}

export const CELL_LEGEND: readonly LegendEntry[] = [
  { kind: "pending", label: "not started", short: "not started", glyph: "" },
  { kind: "generating", label: "generating", short: "generating", glyph: "" },
  { kind: "environment", label: "waiting for the environment", short: "at the environment", glyph: "" },
  { kind: "ok", label: "turn done", short: "turn done", glyph: "" },
  { kind: "terminated", label: "last turn: terminated by the environment (✓ solved, ✗ not)", short: "ended by the env (✓ solved, ✗ not)", glyph: "✓" },
  { kind: "truncated_context", label: "last turn: context truncated", short: "context cut", glyph: "C" },
  { kind: "truncated_response", label: "last turn: response truncated", short: "response cut", glyph: "R" },
  { kind: "max_turns", label: "last turn: max turns reached", short: "max turns", glyph: "M" },
  { kind: "error", label: "last turn: error", short: "error", glyph: "!" },
  { kind: "cancelled", label: "last turn: cancelled", short: "cancelled", glyph: "×" },
];

const BY_KIND = new Map(CELL_LEGEND.map((e) => [e.kind, e]));
export const glyphOf = (kind: CellKind): string => BY_KIND.get(kind)?.glyph ?? "";

/** The most turn cells a row draws; later turns are summed up in an overflow count. */
export const MAX_TURN_CELLS = 24;

export interface TurnCells {
  /** One entry per slot; null for a slot after the sample ended (drawn empty). */
  kinds: (CellKind | null)[];
  /** Turns the row has beyond its slots. */
  overflow: number;
}

/** The cells of a sample's row: `min(maxRolloutTurns, MAX_TURN_CELLS)` slots. */
export function turnCells(sample: SampleView, maxRolloutTurns: number, maxCells = MAX_TURN_CELLS): TurnCells {
  const turns = sample.turns.length;
  const slots = Math.min(Math.max(maxRolloutTurns, turns), maxCells);
  const kinds: (CellKind | null)[] = [];
  for (let i = 0; i < slots; i++) kinds.push(cellKind(sample, i));
  return { kinds, overflow: Math.max(0, turns - slots) };
}

export function cellKind(sample: SampleView, turn: number): CellKind | null {
  const t = sample.turns[turn];
  const done = sample.state === "done";
  if (!t) return done ? null : "pending";
  if (done && turn === sample.turns.length - 1 && sample.termination) return sample.termination;
  if (t.genEnd === null) return "generating";
  if (t.envEnd === null) return done ? "ok" : "environment";
  return "ok";
}

/**
 * What a sample's row and lane are drawn from, as one string: it changes whenever the drawing would (earlier turns
 * never change once the next one started), so rows and lanes re-render only when their own sample changed.
 */
export function sampleSignature(s: SampleView): string {
  const t = s.turns.at(-1);
  return `${s.state}|${s.turns.length}|${t?.genEnd ?? ""}|${t?.envEnd ?? ""}|${s.termination ?? ""}|${s.totalReward}|${s.error ?? ""}`;
}

/** The state of a sample in words: how it ended, or what it is doing now. */
export function sampleStateWords(sample: SampleView): string {
  if (sample.state === "done") {
    const words = sample.termination ? (TERMINATION_WORDS[sample.termination] ?? sample.termination) : "done";
    return sample.error ? `${words}: ${sample.error}` : words;
  }
  const turns = sample.turns.length;
  if (sample.state === "generating") return `generating turn ${turns - 1}`;
  if (sample.state === "environment") return `environment step, turn ${turns - 1}`;
  return turns === 0 ? "waiting to start" : `waiting for turn ${turns}`;
}

export interface Span {
  kind: "gen" | "env";
  turn: number;
  /** Milliseconds since the run started. */
  start: number;
  end: number;
  /** Still running (its end is "now"). */
  open: boolean;
}

/**
 * A sample's lane on the timeline: a generation span per turn (genStart → genEnd) and an environment span per turn
 * that reached the environment (genEnd → envEnd). Spans still running end at `now`.
 */
export function laneSpans(sample: SampleView, now: number): Span[] {
  const done = sample.state === "done";
  const spans: Span[] = [];
  for (const t of sample.turns) {
    if (!t) continue;
    const genOpen = t.genEnd === null;
    spans.push({ kind: "gen", turn: t.turn, start: t.genStart, end: genOpen ? Math.max(now, t.genStart) : t.genEnd!, open: genOpen && !done });
    if (t.genEnd !== null) {
      if (t.envEnd !== null) spans.push({ kind: "env", turn: t.turn, start: t.genEnd, end: t.envEnd, open: false });
      else if (!done) spans.push({ kind: "env", turn: t.turn, start: t.genEnd, end: Math.max(now, t.genEnd), open: true });
    }
  }
  return spans;
}

/** Where a finished sample's lane ends (the end of its last span), or null while it runs or if it never started. */
export function laneEnd(sample: SampleView, spans: readonly Span[]): number | null {
  if (sample.state !== "done" || spans.length === 0) return null;
  return Math.max(...spans.map((s) => s.end));
}

export interface EnvStateAt {
  metadata: Metadata;
  /** Which state this is, in words ("state after turn 2", "latest: initial state, before the first turn", …). */
  when: string;
  task: string;
}

/**
 * The environment state to show for a sample at a turn (null: the latest): the state after that turn, or, while
 * the turn has not reached the environment, the state before it. An episode's last step keeps no new state (the
 * rollout updates a sample's state only when it goes on), so after it the state before that turn is shown.
 */
export function envStateAt(model: RunModel, sample: number, turn: number | null): EnvStateAt | null {
  const s = model.samples[sample];
  if (!s) return null;
  const last = s.turns.length - 1;
  const at = turn === null ? last : Math.min(Math.max(turn, -1), last);
  const metadata = model.metadataAt(sample, at);
  const stepped = at >= 0 && (s.turns[at]?.envEnd ?? null) !== null;
  const latest = turn === null ? "latest: " : "";
  const endedHere =
    stepped && at === last && (s.termination === "terminated" || s.termination === "truncated_context" || s.termination === "truncated_response");
  const before = at === 0 ? "initial state" : `state after turn ${at - 1}`;
  let when: string;
  if (at < 0) when = `${latest}initial state, before the first turn`;
  else if (endedHere) when = `${latest}${before}: the episode ended at turn ${at}, and its final state is not kept`;
  else if (stepped) when = `${latest}state after turn ${at}`;
  else if (s.state !== "done") when = `${latest}${before} (turn ${at} is in progress)`;
  else if (s.error !== null && at === last) when = `${latest}${before} (turn ${at} ended the sample with an error: ${s.error})`;
  else when = `${latest}${before} (turn ${at} did not reach the environment)`;
  return { metadata, when, task: s.task };
}
