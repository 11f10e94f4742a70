/**
 * A run's JSONL export (the same lines as `exportJsonl`) written a few samples at a time, yielding to the page
 * between slices of at most `sliceMs`, into a Blob: what saving a run in IndexedDB and checkpointing a live one use,
 * so neither is a long task of the main thread (a 1,000 × 20 run's export is over 100 MB: one `JSON.stringify`
 * pass took over a second, and IndexedDB clones a string value on the main thread where a Blob is a handle).
 *
 * Each sample's line is written in one go, so it is consistent; a live run may move on between two slices (a
 * checkpoint then holds each sample as it was when its line was written).
 */

import { sampleFinished, type RunProgress } from "./interrupted.js";
import { exportFooter, exportSampleLine } from "./jsonl.js";
import type { RunModel } from "./run-model.js";

export interface SlicedExport {
  blob: Blob;
  /** Time spent writing (not waiting between slices), in milliseconds. */
  workMs: number;
  slices: number;
  /**
   * The samples finished as their lines were written: what the blob holds, which a live run may have moved past by
   * the time the export is done (a checkpoint's summary must say what its text says).
   */
  progress: RunProgress;
}

export interface SliceOptions {
  /** The longest stretch of work between two yields. Default 8 ms. */
  sliceMs?: number;
  /**
   * How to yield (tests pass their own). Default: a background-priority task where the page has `scheduler.postTask`
   * (an export is background work: whatever else the page has to do goes first), else a macrotask.
   */
  yieldToPage?: () => Promise<void>;
}

export async function exportJsonlInSlices(model: RunModel, scenario: unknown, options: SliceOptions = {}): Promise<SlicedExport> {
  const sliceMs = options.sliceMs ?? 8;
  const pause = options.yieldToPage ?? yieldInBackground;
  const parts: Blob[] = [];
  const lines: string[] = [];
  let workMs = 0;
  let slices = 0;
  let start = performance.now();
  const endSlice = () => {
    // Emptied in place: the footer's writer holds on to `lines`.
    if (lines.length) parts.push(new Blob(lines));
    lines.length = 0;
    workMs += performance.now() - start;
    slices += 1;
  };
  // A run may gain samples while it is written (it cannot lose any): the count is read once.
  const count = model.samples.length;
  let finished = 0;
  for (let i = 0; i < count; i++) {
    lines.push(exportSampleLine(model, i), "\n");
    if (sampleFinished(model.samples[i]!)) finished += 1;
    if (performance.now() - start >= sliceMs && i + 1 < count) {
      endSlice();
      await pause();
      start = performance.now();
    }
  }
  // The footer holds the scenario, megabytes for a long script: written in slices too.
  const tick = async () => {
    if (performance.now() - start < sliceMs) return;
    endSlice();
    await pause();
    start = performance.now();
  };
  await writeJsonInSlices(exportFooter(model, scenario), lines, tick);
  lines.push("\n");
  endSlice();
  return { blob: new Blob(parts, { type: "application/x-ndjson" }), workMs, slices, progress: { finished, total: count } };
}

/**
 * Appends `JSON.stringify(value)` to `out` in pieces, calling `tick` (which may yield) after each array element and
 * object member: plain arrays and objects are walked, anything else (strings, numbers, a Date, a class with
 * `toJSON`) is written by `JSON.stringify` itself, so the text is the same.
 */
export async function writeJsonInSlices(value: unknown, out: string[], tick: () => Promise<void>): Promise<void> {
  if (Array.isArray(value)) {
    out.push("[");
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(",");
      const item: unknown = value[i];
      if (item === undefined || typeof item === "function" || typeof item === "symbol") out.push("null");
      else await writeJsonInSlices(item, out, tick);
      await tick();
    }
    out.push("]");
    return;
  }
  if (isPlainObject(value)) {
    out.push("{");
    let first = true;
    for (const key of Object.keys(value)) {
      const item = value[key];
      if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
      out.push(first ? "" : ",", JSON.stringify(key), ":");
      first = false;
      await writeJsonInSlices(item, out, tick);
      await tick();
    }
    out.push("}");
    return;
  }
  out.push(JSON.stringify(value));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== "function";
}

type Scheduler = { yield?: () => Promise<void>; postTask?: (task: () => void, options?: { priority?: string }) => Promise<void> };
const scheduler = () => (globalThis as { scheduler?: Scheduler }).scheduler;

/** Lets the page do everything else it has to do first (background work): a background-priority task. */
export function yieldInBackground(): Promise<void> {
  const s = scheduler();
  if (s?.postTask) return s.postTask(() => undefined, { priority: "background" });
  return macrotask();
}

/** Gives the page a turn (work the user waits for): `scheduler.yield()` where the browser has it, else a macrotask. */
export function yieldToPage(): Promise<void> {
  const s = scheduler();
  if (s?.yield) return s.yield();
  return macrotask();
}

function macrotask(): Promise<void> {
  if (typeof MessageChannel === "undefined") return new Promise((resolve) => setTimeout(resolve, 0));
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
