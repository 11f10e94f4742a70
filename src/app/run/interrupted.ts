/**
 * Runs that did not end on their own: the worker crashed, the device was lost, the tab was closed or reloaded.
 * What finished is kept as it is; each sample still under way gets an explicit ending (`error` for a crash,
 * `cancelled` for an interruption by the page), with the reason, so the run can be shown, exported and imported
 * again honestly (an export's missing termination would otherwise read as exported under way on import).
 */

import type { TerminationReason } from "../../core/index.js";
import type { RunModel } from "./run-model.js";

export interface RunProgress {
  /** Samples that reached their own ending (not cancelled, not ended here). */
  finished: number;
  total: number;
}

/** The error of a sample this module ended: the reason follows. */
export const ENDED_EARLY = "the run ended before this sample finished: ";

const finishedOnItsOwn = (termination: unknown, error: unknown) =>
  Boolean(termination) && termination !== "cancelled" && !(typeof error === "string" && error.startsWith(ENDED_EARLY));

/** Whether a sample of a run model reached its own ending (what `finished` counts). */
export const sampleFinished = (s: RunModel["samples"][number]) => finishedOnItsOwn(s.termination, s.error);

export function runProgress(model: RunModel): RunProgress {
  return { finished: model.samples.filter(sampleFinished).length, total: model.samples.length };
}

/**
 * Ends a run model whose rollout stopped without its own end: each unfinished sample ends with `termination`
 * (default `error`) and the reason, and the run is marked failed. A run that already ended is left as it is.
 * Returns whether anything changed.
 */
export function endUnfinished(model: RunModel, reason: string, termination: TerminationReason = "error"): boolean {
  const t = model.summary.lastT;
  let changed = false;
  for (const s of model.samples) {
    if (s.termination !== null) continue;
    model.apply({
      type: "sample_end",
      t,
      sample: s.sample,
      idx: s.idx,
      termination,
      error: `${ENDED_EARLY}${reason}`,
      totalReward: s.totalReward,
      turns: s.turns.filter((turn) => turn.observationIndex !== null).length,
    });
    changed = true;
  }
  if (model.summary.status === "running" && model.samples.length > 0) {
    model.apply({ type: "rollout_error", t, error: reason });
    changed = true;
  }
  return changed;
}

/** The reason a recovered run gives for the samples the closed or reloaded page left unfinished. */
export const INTERRUPTED_BY_PAGE = "the page was closed or reloaded mid-run (recovered from this browser's storage)";

/**
 * A checkpoint's JSONL (an export of a run under way) as an export of an interrupted run: every sample line
 * without a termination gets `cancelled` and the reason as its `error`, the footer `partial: true`. Lines that do
 * not parse are left as they are (the importer reports them).
 */
export function markInterrupted(jsonl: string, reason: string = INTERRUPTED_BY_PAGE): { jsonl: string; progress: RunProgress } {
  let finished = 0;
  let total = 0;
  const lines = jsonl.split("\n").map((line) => {
    if (!line.trim()) return line;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return line;
    }
    if (typeof record !== "object" || record === null) return line;
    // A line this cannot write again (a value nested too deep for JSON.stringify) is left as it is: the reader then
    // reports it with its line number, as it does any line it refuses.
    const rewrite = (changed: Record<string, unknown>) => {
      try {
        return JSON.stringify(changed);
      } catch {
        return line;
      }
    };
    if ("message_log" in record) {
      total += 1;
      if (record.termination) {
        if (finishedOnItsOwn(record.termination, record.error)) finished += 1;
        return line;
      }
      return rewrite({ ...record, termination: "cancelled", error: `${ENDED_EARLY}${reason}` });
    }
    if ("lab/format" in record) return rewrite({ ...record, partial: true });
    return line;
  });
  return { jsonl: lines.join("\n"), progress: { finished, total } };
}
