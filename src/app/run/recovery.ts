/**
 * Keeps the page's run safe from the page itself: while a run is live its checkpoint (src/app/run/checkpoints.ts)
 * is rewritten at most about once a second, and at once when the page is hidden or left. A run that ends is saved
 * among the saved runs (src/app/run/saved-runs.ts): finished, stopped, failed (a crashed worker, a lost device: with
 * what finished), or replaced while live (an import, a saved or recovered run opened, a link's run started: the
 * replaced run is stopped as Stop stops it, and kept as Stop keeps it). A run imported from a file is saved too.
 *
 * A run is kept only when its save commits (./idb.ts): its checkpoint is deleted only then. When the save fails (a
 * full quota), the checkpoint stays (the run's final state is written into it if there is room), the page says so
 * with the reason (./kept.ts, src/app/KeepNotices.tsx) and offers the run's export and another try.
 *
 * Checkpoints a closed or reloaded page left behind are offered by src/app/RecoveredRuns.tsx, through
 * `readRecovered` (then read and checked as an import is), `openRecoveredRead` and `discardRecovered`.
 *
 * `keepRunsOf` connects it to the page's run session (../store.ts does, once): it follows the session's events.
 */

import type { Scenario } from "../../scenario/schema.js";
import type { RunSession, Shown } from "../session/run-session.js";
import { buildRunInSlices } from "./build-slices.js";
import { deleteCheckpoint, listInterrupted, lockName, readCheckpoint, writeCheckpoint, type Checkpoint, type CheckpointSummary } from "./checkpoints.js";
import { describeStorageError } from "./idb.js";
import { endUnfinished, markInterrupted, runProgress, type RunProgress } from "./interrupted.js";
import { exportJsonlInSlices } from "./export-slices.js";
import { exportJsonl, type JsonlReadResult } from "./jsonl.js";
import { dismissKey, notify } from "./kept.js";
import { exportFileName, runTitle } from "./run-names.js";
import { keptAsOf, setKeptAs } from "./kept-as.js";
import type { RunModel } from "./run-model.js";
import { listRuns, saveRun } from "./saved-runs.js";

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
  /** What the last checkpoint that committed holds (null: none committed yet). */
  committed: { finished: number; total: number; at: number; final: boolean } | null;
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

function checkpointNow(run: LiveRun): void {
  if (run.model.samples.length === 0 || run.model.version === run.written) return;
  const started = performance.now();
  let jsonl: string;
  try {
    jsonl = exportJsonl(run.model, run.scenario);
  } catch (e) {
    report(run, "could not export the run for its checkpoint (a reload would recover an older one, or none)", e);
    return;
  }
  // Written in one go: the run is as the text says.
  write(run, jsonl, runProgress(run.model), performance.now() - started, run.model.version);
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
    .then(({ blob, workMs, progress }) => live.get(run.model) === run && version > run.written && write(run, blob, progress, workMs, version))
    .catch((e: unknown) => report(run, "could not export the run for its checkpoint (a reload would recover an older one, or none)", e))
    .finally(() => (run.writing = false));
}

/**
 * A checkpoint that could not be written, or a run that could not be saved: said on the console with what was being
 * done (once per run and kind of failure: a broken IndexedDB fails every second while the run goes on). What the
 * user must know is also shown in the page (`notify`).
 */
function report(run: Pick<LiveRun, "id" | "reported">, what: string, error: unknown): void {
  if (run.reported.has(what)) return;
  run.reported.add(what);
  console.error(`rollout-lab: ${what} (run ${run.id}):`, error);
}

const time = (ms: number) => new Date(ms).toLocaleTimeString();

/** Exports `model` as a Blob (for a notice's Export button). */
const exporter = (model: RunModel, scenario: unknown) => async () => (await exportJsonlInSlices(model, scenario)).blob;

/** Writes a checkpoint; `progress` is the samples finished in `jsonl` (not the run's now: it may have moved on). */
function write(run: LiveRun, jsonl: string | Blob, progress: RunProgress, cost: number, version: number): void {
  const { finished, total } = progress;
  run.written = version;
  run.nextAt = Date.now() + Math.max(CHECKPOINT_INTERVAL_MS, cost * 20);
  const at = Date.now();
  void writeCheckpoint({ id: run.id, startedAt: run.model.summary.startedAt, updatedAt: at, mode: run.model.summary.mode, finished, total, jsonl }).then(
    () => {
      // Transactions on the store commit in the order they were made: a final checkpoint (`keepEnded`) comes last.
      if (!run.committed?.final) run.committed = { finished, total, at, final: false };
    },
    (e: unknown) => {
      report(run, "could not write the run's checkpoint (a reload would recover an older one, or none)", e);
      if (live.get(run.model) !== run || run.reported.has("checkpoint notice")) return;
      run.reported.add("checkpoint notice");
      const kept = run.committed ? `its last checkpoint (${run.committed.finished} of ${run.committed.total} samples finished, at ${time(run.committed.at)}) is all a reload would recover` : "a reload or a crash of the tab would lose it";
      notify({
        tone: "error",
        key: `checkpoint:${run.id}`,
        text: `The run under way cannot be checkpointed in this browser: ${describeStorageError((e as { original?: unknown }).original ?? e)}. It goes on, but ${kept}; export it to keep it.`,
        exportRun: { name: exportFileName(run.model, run.scenario), blob: exporter(run.model, run.scenario) },
      });
    },
  );
}

/** Every live run (shown or not: a fork while another run is shown) is checkpointed when its time comes. */
function tick(): void {
  for (const run of live.values()) if (Date.now() >= run.nextAt) checkpointInSlices(run);
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
  live.set(model, { id, model, scenario, written: -1, nextAt: 0, committed: null, releaseLock, reported: new Set() });
  ticker ??= setInterval(tick, 250);
}

/** No longer live (ended or dropped): the page stops checkpointing it. */
function leave(run: LiveRun): void {
  live.delete(run.model);
  dismissKey(`checkpoint:${run.id}`);
  if (live.size === 0 && ticker) {
    clearInterval(ticker);
    ticker = null;
  }
}

const meanOf = (model: RunModel) => (model.samples.length ? model.samples.reduce((a, s) => a + s.totalReward, 0) / model.samples.length : null);

/**
 * The run is over (finished, stopped, failed; shown or replaced): it is saved, and its checkpoint goes once the save
 * committed. A fork (kept with its original) or a run already saved only lets go of its checkpoint.
 */
function end(run: LiveRun, status: "finished" | "failed", error: string | null, scenario: unknown): void {
  leave(run);
  const model = run.model;
  // A run whose rollout did not end ends here, its samples under way with the reason.
  if (status === "failed" && model.summary.status === "running" && endUnfinished(model, error ?? "the run failed")) model.publish();
  if (model.samples.length === 0 || keptAsOf(model)) {
    void deleteCheckpoint(run.id)
      .catch((e: unknown) => report(run, "could not delete the checkpoint of a run that ended (a reload may offer it as interrupted)", e))
      .finally(() => run.releaseLock());
    return;
  }
  setKeptAs(model, { state: "pending" });
  void keepEnded(run, status, scenario);
}

/** Saves an ended run (`end`); on failure keeps its checkpoint (its final state in it if there is room) and says so. */
async function keepEnded(run: LiveRun, status: "finished" | "failed", scenario: unknown): Promise<void> {
  const model = run.model;
  const title = runTitle(model, scenario, status);
  const { total } = runProgress(model);
  let blob: Blob | null = null;
  try {
    blob = (await exportJsonlInSlices(model, scenario)).blob;
    const summary = await saveRun({ title, samples: total, meanReward: meanOf(model), checkpoint: run.id }, blob);
    setKeptAs(model, { state: "saved", id: summary.id });
  } catch (e) {
    setKeptAs(model, { state: "unsaved" });
    report(run, "could not save the run in this browser (its checkpoint is kept: a reload offers it)", e);
    // The checkpoint is what survives a reload: it gets the run as it ended, if the storage takes it.
    if (blob) {
      const { finished } = runProgress(model);
      const at = Date.now();
      try {
        await writeCheckpoint({ id: run.id, startedAt: model.summary.startedAt, updatedAt: at, mode: model.summary.mode, finished, total, jsonl: blob });
        run.committed = { finished, total, at, final: true };
      } catch {
        // The older checkpoint (if any) stays.
      }
    }
    notifyUnsaved(run, title, scenario, e);
    return;
  }
  try {
    await deleteCheckpoint(run.id);
  } catch (e) {
    report(run, "could not delete the checkpoint of a run that was saved (it is not offered as interrupted, and is deleted again at the next listing)", e);
  } finally {
    run.releaseLock();
  }
}

/** What a reload would bring back of a run that could not be saved. */
function whatSurvives(run: LiveRun): string {
  const c = run.committed;
  if (!c) return "No checkpoint of it could be written either: export it now, or it is lost when this page is closed or reloaded.";
  if (c.final) return "Its checkpoint holds the run as it ended: a reload of the page offers it again (Show recovered run).";
  return `Its last checkpoint (${c.finished} of ${c.total} samples finished, at ${time(c.at)}) is kept: a reload of the page offers it (Show recovered run); export the run to keep all of it.`;
}

function notifyUnsaved(run: LiveRun, title: string, scenario: unknown, error: unknown): void {
  const model = run.model;
  const key = `unsaved:${run.id}`;
  notify({
    tone: "error",
    key,
    text: `The run “${title}” is not saved in this browser: ${storageReason(error)}. ${whatSurvives(run)}`,
    exportRun: { name: exportFileName(model, scenario), blob: exporter(model, scenario) },
    retry: {
      label: "Try saving again",
      run: async () => {
        const { blob } = await exportJsonlInSlices(model, scenario);
        const summary = await saveRun({ title, samples: model.samples.length, meanReward: meanOf(model), checkpoint: run.id }, blob);
        setKeptAs(model, { state: "saved", id: summary.id });
        dismissKey(key);
        await deleteCheckpoint(run.id).catch((e: unknown) => report(run, "could not delete the checkpoint of a run that was saved (it is not offered as interrupted, and is deleted again at the next listing)", e));
        run.releaseLock();
      },
    },
  });
}

/** The reason of a failed save, in words (a StorageError's own reason, else its message). */
function storageReason(error: unknown): string {
  const reason = (error as { reason?: unknown } | null)?.reason;
  return typeof reason === "string" ? reason : describeStorageError(error);
}

/** A run shown that is no live run's end and not saved yet (an imported file): saved, or the page says why not. */
function keepShown(model: RunModel, scenario: unknown, status: "finished" | "failed"): void {
  if (model.samples.length === 0) return;
  setKeptAs(model, { state: "pending" });
  const title = runTitle(model, scenario, status);
  const save = async () => {
    const { blob } = await exportJsonlInSlices(model, scenario);
    const summary = await saveRun({ title, samples: model.samples.length, meanReward: meanOf(model) }, blob);
    setKeptAs(model, { state: "saved", id: summary.id });
  };
  save().catch((e: unknown) => {
    setKeptAs(model, { state: "unsaved" });
    console.error("rollout-lab: could not save the run in this browser:", e);
    const key = `unsaved-shown:${title}:${Math.random()}`;
    notify({
      tone: "error",
      key,
      text: `The run “${title}” is shown but not saved in this browser: ${storageReason(e)}. Export it to keep it.`,
      exportRun: { name: exportFileName(model, scenario), blob: exporter(model, scenario) },
      retry: {
        label: "Try saving again",
        run: async () => {
          await save();
          dismissKey(key);
        },
      },
    });
  });
}

/**
 * Keeps the runs of `session`: a run that starts is checkpointed while it is live and saved once it ended (or
 * failed); a finished run shown that no live run of this page was (an imported file) is saved like one. The page
 * going away (reload, close, navigation) or into the background writes what is there now. Returns the disconnect.
 */
export function keepRunsOf(session: RunSession): () => void {
  const off = session.on((event) => {
    if (event.type === "started") begin(event.model, event.scenario);
    else if (event.type === "ended" || event.type === "failed") {
      const run = live.get(event.model);
      if (run) end(run, event.type === "ended" ? "finished" : "failed", event.type === "failed" ? event.error : null, event.scenario);
    } else if (event.type === "shown") keepIfImported(event.shown);
  });
  if (typeof window === "undefined") return off;
  const flush = () => live.forEach((run) => checkpointNow(run));
  const hidden = () => document.visibilityState === "hidden" && flush();
  window.addEventListener("pagehide", flush);
  document.addEventListener("visibilitychange", hidden);
  return () => {
    off();
    window.removeEventListener("pagehide", flush);
    document.removeEventListener("visibilitychange", hidden);
  };
}

/** A run shown that is not kept yet and was no live run of this page (an imported file, failed or not) is saved. */
function keepIfImported(shown: Shown): void {
  const { model } = shown;
  if (!model || shown.kind !== "imported" || (shown.status !== "finished" && shown.status !== "failed") || live.has(model) || keptAsOf(model) || model.summary.status === "running") return;
  keepShown(model, shown.scenario, shown.status);
}

/**
 * The checkpoints of interrupted runs. One a saved run supersedes (its save committed, and the checkpoint's delete
 * after it failed) is no interrupted run: it is left out, and deleted again.
 */
export async function listRecoverable(): Promise<CheckpointSummary[]> {
  const [interrupted, saved] = await Promise.all([listInterrupted(), listRuns().catch(() => [])]);
  const superseded = new Set(saved.flatMap((r) => (r.checkpoint ? [r.checkpoint] : [])));
  for (const c of interrupted) if (superseded.has(c.id)) void deleteCheckpoint(c.id).catch(() => undefined);
  return interrupted.filter((c) => !superseded.has(c.id));
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
 * samples marked cancelled with the reason, saved among the saved runs (where it stays), and its checkpoint deleted
 * once that save committed. A save that fails (a full quota) still shows the run, keeps the checkpoint (offered again
 * after a reload) and says so, with the reason, an Export and another try.
 * `claim` (the page's `claimShow`): superseded before it is saved, it stops there (the checkpoint stays on offer);
 * superseded once saved, it is not shown (it is among the saved runs).
 */
export async function openRecoveredRead(
  session: RunSession,
  recovered: RecoveredRun,
  read: Pick<JsonlReadResult, "samples" | "footer">,
  skipped = 0,
  built?: { model: RunModel; scenario: unknown },
  claim?: AbortSignal,
): Promise<void> {
  const { model, scenario, title, meanReward } = await recoveredRun(recovered, read, skipped, built, claim);
  if (claim?.aborted) return;
  const save = () => saveRun({ title, samples: recovered.progress.total, meanReward, checkpoint: recovered.id }, recovered.jsonl);
  let failure: unknown = null;
  try {
    setKeptAs(model, { state: "saved", id: (await save()).id });
  } catch (e) {
    failure = e;
    setKeptAs(model, { state: "unsaved" });
  }
  const shown = session.show({ model, scenario: scenario as Scenario | null, kind: "recovered" }, claim ? { claim } : {});
  if (failure === null) {
    await deleteCheckpoint(recovered.id);
    changed();
    return;
  }
  console.error("rollout-lab: could not save the recovered run in this browser (its checkpoint is kept):", failure);
  if (!shown) return; // superseded: nothing was shown, and the checkpoint is still on offer
  const key = `unsaved-recovered:${recovered.id}`;
  notify({
    tone: "error",
    key,
    text: `The recovered run “${title}” is shown but not saved in this browser: ${storageReason(failure)}. Its checkpoint is kept: it stays on offer here and after a reload; export the run to keep it elsewhere.`,
    exportRun: { name: exportFileName(model, scenario), blob: async () => new Blob([recovered.jsonl], { type: "application/x-ndjson" }) },
    retry: {
      label: "Try saving again",
      run: async () => {
        setKeptAs(model, { state: "saved", id: (await save()).id });
        dismissKey(key);
        await deleteCheckpoint(recovered.id);
        changed();
      },
    },
  });
}

export async function discardRecovered(id: string): Promise<void> {
  await deleteCheckpoint(id);
  changed();
}
