/**
 * Keeps the page's run safe from the page itself: while a run is live its checkpoint (src/app/run/checkpoints.ts)
 * is rewritten at most about once a second, and at once when the page is hidden or left; a run that ends deletes
 * it. A run that failed (a crashed worker, a lost device) is saved like a finished one, with what finished.
 * Checkpoints a closed or reloaded page left behind are offered by src/app/RecoveredRuns.tsx, through
 * `readRecovered` (then read and checked as an import is), `openRecoveredRead` and `discardRecovered`.
 *
 * Imported once, by main.tsx, for its side effects (it watches the store).
 */

import { useLab } from "../store.js";
import { buildRunInSlices } from "./build-slices.js";
import { deleteCheckpoint, listInterrupted, lockName, readCheckpoint, writeCheckpoint, type Checkpoint, type CheckpointSummary } from "./checkpoints.js";
import { endUnfinished, markInterrupted, runProgress, type RunProgress } from "./interrupted.js";
import { exportJsonlInSlices } from "./export-slices.js";
import { exportJsonl, type JsonlReadResult } from "./jsonl.js";
import type { RunModel } from "./run-model.js";
import { saveRun } from "./saved-runs.js";

/** The shortest time between two checkpoints of a run; longer when writing one costs more (a large run). */
export const CHECKPOINT_INTERVAL_MS = 1000;

interface LiveRun {
  id: string;
  model: RunModel;
  /** The scenario the run was started with (the export's footer carries it). */
  scenario: unknown;
  /** The model version the last checkpoint holds. */
  written: number;
  nextAt: number;
  /** A checkpoint is being written in slices. */
  writing?: boolean;
  /** The kinds of failure already reported (`report`). */
  reported: Set<string>;
  releaseLock: () => void;
}

/** Runs under way in this page (the one shown, and forks still going while another run is shown), by model. */
const live = new Map<RunModel, LiveRun>();
let ticker: ReturnType<typeof setInterval> | null = null;
const listeners = new Set<() => void>();

/** Calls `listener` when the interrupted runs on offer may have changed. */
export function onRecoverableChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
const changed = () => listeners.forEach((l) => l());

type WithSavedAs = RunModel & { savedAs?: string };

function checkpointNow(run: LiveRun): void {
  if (run.model.samples.length === 0 || run.model.version === run.written) return;
  const started = performance.now();
  const jsonl = exportJsonl(run.model, run.scenario);
  write(run, jsonl, performance.now() - started, run.model.version);
}

/**
 * The periodic checkpoint, written a few samples at a time into a Blob (./export-slices.ts), so a large run's
 * checkpoint is no long task of the page; the run may move on meanwhile (each sample is written as it is then).
 */
function checkpointInSlices(run: LiveRun): void {
  if (run.writing || run.model.samples.length === 0 || run.model.version === run.written) return;
  run.writing = true;
  const version = run.model.version;
  void exportJsonlInSlices(run.model, run.scenario)
    // A run that ended meanwhile is not written (its end decides what stays).
    .then(({ blob, workMs }) => live.get(run.model) === run && version > run.written && write(run, blob, workMs, version))
    .catch((e: unknown) => report(run, "could not export the run for its checkpoint (a reload would recover an older one, or none)", e))
    .finally(() => (run.writing = false));
}

/**
 * A checkpoint that could not be written, or a failed run that could not be saved: said on the console with what
 * was being done (once per run and kind of failure: a broken IndexedDB fails every second while the run goes on).
 * The page's run goes on; only what would survive a reload is missing.
 */
function report(run: Pick<LiveRun, "id" | "reported">, what: string, error: unknown): void {
  if (run.reported.has(what)) return;
  run.reported.add(what);
  console.error(`rollout-lab: ${what} (run ${run.id}):`, error);
}

function write(run: LiveRun, jsonl: string | Blob, cost: number, version: number): void {
  const { finished, total } = runProgress(run.model);
  run.written = version;
  run.nextAt = Date.now() + Math.max(CHECKPOINT_INTERVAL_MS, cost * 20);
  void writeCheckpoint({
    id: run.id,
    startedAt: run.model.summary.startedAt,
    updatedAt: Date.now(),
    mode: run.model.summary.mode,
    finished,
    total,
    jsonl,
  }).catch((e: unknown) => report(run, "could not write the run's checkpoint (a reload would recover an older one, or none)", e));
}

function tick(): void {
  const shown = useLab.getState().model;
  for (const run of live.values()) {
    // A run that ended while another was shown (a fork, a run replaced by a saved one): nothing to recover.
    if (run.model !== shown && run.model.summary.status !== "running") finish(run, Promise.resolve());
    else if (Date.now() >= run.nextAt) checkpointInSlices(run);
  }
}

function begin(model: RunModel, scenario: unknown): void {
  if (live.has(model)) return;
  const id = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  let releaseLock = () => {};
  const locks = (globalThis.navigator as { locks?: LockManager } | undefined)?.locks;
  if (locks) {
    const held = new Promise<void>((resolve) => (releaseLock = resolve));
    void locks.request(lockName(id), () => held).catch(() => undefined);
  }
  live.set(model, { id, model, scenario, written: -1, nextAt: 0, releaseLock, reported: new Set() });
  ticker ??= setInterval(tick, 250);
}

/** The run is over: its checkpoint goes once `saved` (a failed run being saved) settles. */
function finish(run: LiveRun, saved: Promise<unknown>): void {
  live.delete(run.model);
  if (live.size === 0 && ticker) {
    clearInterval(ticker);
    ticker = null;
  }
  void saved
    .then(
      () => deleteCheckpoint(run.id).catch((e: unknown) => report(run, "could not delete the checkpoint of a run that ended (a reload may offer it as interrupted)", e)),
      // Not saved: its checkpoint stays (the page offers it after a reload), and the page says why.
      (e: unknown) => {
        report(run, "could not save the failed run in this browser (its checkpoint is kept: a reload offers it)", e);
        useLab.setState((state) => (state.model === run.model ? { error: `${state.error ?? "the run failed"} (and it could not be saved in this browser: ${(e as Error).message})` } : {}));
      },
    )
    .finally(() => run.releaseLock());
}

/** A failed run is saved like a finished one (KeepAndShare saves those), with what finished. */
function saveFailed(model: WithSavedAs, error: string | null): Promise<unknown> {
  // A run whose rollout did not end (a fork's crashed worker) ends here, its samples under way with the reason.
  if (model.summary.status === "running" && endUnfinished(model, error ?? "the run failed")) {
    queueMicrotask(() => useLab.getState().model === model && useLab.setState({ version: model.version }));
  }
  if (model.samples.length === 0 || model.savedAs) return Promise.resolve();
  model.savedAs = "pending";
  const { finished, total } = runProgress(model);
  const mean = model.samples.reduce((a, s) => a + s.totalReward, 0) / total;
  const title = `failed · ${model.summary.mode ?? "run"} · ${finished} of ${total} samples finished · ${new Date().toLocaleTimeString()}`;
  return saveRun({ title, samples: total, meanReward: mean }, exportJsonl(model, useLab.getState().runScenario)).then((summary) => {
    model.savedAs = summary.id;
  });
}

useLab.subscribe((state, prev) => {
  const model = state.model;
  if (!model) return;
  if (state.status === "running" || state.status === "paused") begin(model, state.runScenario);
  const run = live.get(model);
  if (run && state.status !== prev.status && (state.status === "finished" || state.status === "failed")) {
    finish(run, state.status === "failed" ? saveFailed(model, state.error) : Promise.resolve());
  }
});

// The page going away (reload, close, navigation) or into the background: write what is there now.
if (typeof window !== "undefined") {
  const flush = () => live.forEach((run) => checkpointNow(run));
  window.addEventListener("pagehide", flush);
  document.addEventListener("visibilitychange", () => document.visibilityState === "hidden" && flush());
}

export async function listRecoverable(): Promise<CheckpointSummary[]> {
  return listInterrupted();
}

/** An interrupted run's checkpoint made ready to open: its export with the samples under way ended, and its title. */
export interface RecoveredRun {
  id: string;
  title: string;
  /** The checkpoint's export after `markInterrupted` (lines that do not parse are left as they are). */
  jsonl: string;
  progress: RunProgress;
}

export function prepareRecovered(checkpoint: Checkpoint): RecoveredRun {
  const { jsonl, progress } = markInterrupted(checkpoint.jsonl);
  const title = `recovered · ${checkpoint.mode ?? "run"} · ${progress.finished} of ${progress.total} samples finished · ${new Date(checkpoint.updatedAt).toLocaleTimeString()}`;
  return { id: checkpoint.id, title, jsonl, progress };
}

/**
 * The checkpoint `id` ready to open, as a file named by its title: the page reads it as an import is read
 * (src/app/ImportJsonl.tsx: every line checked; a damaged one shows its problems and opens its valid lines only
 * when the user asks), then hands the read to `openRecoveredRead`. Null when the checkpoint is gone.
 */
export async function readRecovered(id: string): Promise<{ recovered: RecoveredRun; file: File } | null> {
  const checkpoint = await readCheckpoint(id);
  if (!checkpoint) return null;
  const recovered = prepareRecovered(checkpoint);
  return { recovered, file: new File([recovered.jsonl], recovered.title, { type: "application/x-ndjson" }) };
}

/**
 * The run of a recovered checkpoint's read (all of it, or its valid lines: `skipped` lines were left out) and what
 * it is saved as. The export is saved as it was read, damaged lines included (nothing of the checkpoint is lost);
 * the title says how many lines were left out.
 */
export async function recoveredRun(
  recovered: RecoveredRun,
  read: Pick<JsonlReadResult, "samples" | "footer">,
  skipped = 0,
  built?: { model: RunModel; scenario: unknown },
  claim?: AbortSignal,
): Promise<{ model: RunModel; scenario: unknown; title: string; meanReward: number | null }> {
  const { model, scenario } = built ?? (await buildRunInSlices(read, claim ? { signal: claim } : {}));
  const meanReward = model.samples.length ? model.samples.reduce((a, s) => a + s.totalReward, 0) / model.samples.length : null;
  const title = skipped ? `${recovered.title} · ${skipped} damaged ${skipped === 1 ? "line" : "lines"} left out` : recovered.title;
  return { model, scenario, title, meanReward };
}

/**
 * Shows an interrupted run like a saved one, from the read of its checkpoint (`readRecovered`): its unfinished
 * samples marked cancelled with the reason, saved among the saved runs (where it stays), and its checkpoint deleted.
 * `claim` (the page's `claimShow`): superseded before it is saved, it stops there (the checkpoint stays on offer);
 * superseded once saved, it is not shown (it is among the saved runs).
 */
export async function openRecoveredRead(
  recovered: RecoveredRun,
  read: Pick<JsonlReadResult, "samples" | "footer">,
  skipped = 0,
  built?: { model: RunModel; scenario: unknown },
  claim?: AbortSignal,
): Promise<void> {
  const { model, scenario, title, meanReward } = await recoveredRun(recovered, read, skipped, built, claim);
  if (claim?.aborted) return;
  const summary = await saveRun({ title, samples: recovered.progress.total, meanReward }, recovered.jsonl);
  (model as WithSavedAs).savedAs = summary.id;
  useLab.getState().show(model, scenario as never, "finished", claim);
  await deleteCheckpoint(recovered.id);
  changed();
}

export async function discardRecovered(id: string): Promise<void> {
  await deleteCheckpoint(id);
  changed();
}
