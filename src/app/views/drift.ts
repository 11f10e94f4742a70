/**
 * The batch's drift from the chat template: the token consistency check (./token-check-view.ts) of every finished
 * sample, computed off the render path (a few samples per idle slice) and cached by the sample's message log, so a
 * 300-sample run is checked once, not on every draw. And the row filters of the batch overview: predicates over
 * samples, so that more (search, outcome) can join "only drifting samples".
 */

import { useEffect, useMemo, useState } from "react";
import type { RunModel, SampleView } from "../run/run-model.js";
import { checkByteLevel, checkInput, isByteLevelSpec, tokenizerSpecOf, useTokenizerGeneration, type CheckScenario, type WorkerCheck } from "./token-check-view.js";

/** A sample's verdict: drifts or not; absent until checked. */
type Verdicts = WeakMap<object, boolean>;

/** Per scenario (a run's settings decide the check), per message log (the array a finished sample keeps). */
const verdictsByScenario = new WeakMap<object, Verdicts>();
/**
 * Logs the check cannot take with a scenario's tokenizer (an imported file's token ids outside the byte-level
 * vocabulary, say): not checked, counted as such, and not tried again with that tokenizer (another one chosen for
 * the run may take them). The Tokens view says why for the selected sample.
 */
const uncheckableByScenario = new WeakMap<object, WeakSet<object>>();
const NO_SCENARIO = {};

function verdictsFor(scenario: CheckScenario): Verdicts {
  const key = scenario ?? NO_SCENARIO;
  let verdicts = verdictsByScenario.get(key);
  if (!verdicts) verdictsByScenario.set(key, (verdicts = new WeakMap()));
  return verdicts;
}

function uncheckableFor(scenario: CheckScenario): WeakSet<object> {
  const key = scenario ?? NO_SCENARIO;
  let logs = uncheckableByScenario.get(key);
  if (!logs) uncheckableByScenario.set(key, (logs = new WeakSet()));
  return logs;
}

/** Whether a finished sample drifts (null: not finished, or not checked yet). */
export function driftOf(sample: SampleView, scenario: CheckScenario): boolean | null {
  if (sample.state !== "done") return null;
  return verdictsFor(scenario).get(sample.messages) ?? null;
}

/** Samples checked per slice of idle time (a byte-level check of a long log takes a few milliseconds). */
export const CHUNK = 16;

export interface DriftCheckOptions {
  scenario: CheckScenario;
  workerCheck?: WorkerCheck | undefined;
  /** Called after each slice that found new verdicts. */
  onProgress(): void;
  /** The worker has not got the run's model (its tokenizer): nothing can be checked. */
  onNeedsModel(model: string): void;
  /** Waits for the next slice (idle time in the page; tests pass their own). */
  nextSlice?: () => Promise<void>;
  signal: AbortSignal;
}

const idle = () =>
  new Promise<void>((resolve) => {
    const ric = (globalThis as { requestIdleCallback?: (cb: () => void, options?: { timeout: number }) => number }).requestIdleCallback;
    if (ric) ric(() => resolve(), { timeout: 200 });
    else setTimeout(resolve, 0);
  });

/** Checks the finished samples not checked yet, a chunk per slice, until done or aborted. */
export async function checkFinished(samples: readonly SampleView[], options: DriftCheckOptions): Promise<void> {
  const { scenario, workerCheck, signal } = options;
  const verdicts = verdictsFor(scenario);
  const uncheckable = uncheckableFor(scenario);
  const spec = tokenizerSpecOf(scenario);
  const local = isByteLevelSpec(spec);
  const next = options.nextSlice ?? idle;
  const todo = samples.filter((s) => s.state === "done" && !verdicts.has(s.messages) && !uncheckable.has(s.messages));
  for (let at = 0; at < todo.length; at += CHUNK) {
    if (at > 0 || !local) await next();
    if (signal.aborted) return;
    for (const s of todo.slice(at, at + CHUNK)) {
      if (local) {
        try {
          verdicts.set(s.messages, !checkByteLevel(s, scenario).consistent);
        } catch {
          uncheckable.add(s.messages);
        }
        continue;
      }
      const answer = await (workerCheck ?? (() => Promise.resolve({ kind: "not_loaded" as const, loaded: null })))(checkInput(s, scenario), spec!).catch(() => null);
      // Kept even if this pass was superseded (a live run redraws often): the verdict holds, and is not asked again.
      if (answer?.kind === "checked") verdicts.set(s.messages, !answer.result.consistent);
      if (signal.aborted) return;
      if (answer?.kind === "not_loaded") {
        options.onNeedsModel(spec!);
        return;
      }
    }
    options.onProgress();
  }
}

export interface DriftSummary {
  finished: number;
  checked: number;
  drifting: number;
  /** The run's model is not loaded in the worker: its tokenizer is needed to check. */
  needsModel: string | null;
}

/** Counts the run's drifting samples, checking new finished ones in idle time; redrawn as verdicts arrive. */
export function useDrift(run: { model: RunModel }, scenario: CheckScenario, workerCheck?: WorkerCheck): DriftSummary {
  const [progress, setProgress] = useState(0);
  const generation = useTokenizerGeneration();
  const [needsModel, setNeedsModel] = useState<{ of: CheckScenario; generation: number; model: string } | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    void checkFinished(run.model.samples, {
      scenario,
      workerCheck,
      signal: controller.signal,
      onProgress: () => setProgress((p) => p + 1),
      onNeedsModel: (model) => setNeedsModel({ of: scenario, generation, model }),
    });
    return () => controller.abort();
  }, [run, scenario, workerCheck, generation]);
  return useMemo(() => {
    void progress;
    let finished = 0;
    let checked = 0;
    let drifting = 0;
    for (const s of run.model.samples) {
      if (s.state !== "done") continue;
      finished++;
      const d = driftOf(s, scenario);
      if (d === null) continue;
      checked++;
      if (d) drifting++;
    }
    return { finished, checked, drifting, needsModel: needsModel && needsModel.of === scenario && needsModel.generation === generation ? needsModel.model : null };
  }, [run, scenario, progress, needsModel, generation]);
}

/** A filter of the batch's rows. */
export interface RowFilter {
  id: string;
  test(sample: SampleView): boolean;
}

/** The rows shown: the samples every filter keeps, by sample number, in order (null filters: all). */
export function filterRows(samples: readonly SampleView[], filters: readonly RowFilter[]): number[] {
  const rows: number[] = [];
  for (const s of samples) if (filters.every((f) => f.test(s))) rows.push(s.sample);
  return rows;
}

/** "only drifting samples": the finished samples the check found drifting. */
export const driftingFilter = (scenario: CheckScenario): RowFilter => ({ id: "drifting", test: (s) => driftOf(s, scenario) === true });
