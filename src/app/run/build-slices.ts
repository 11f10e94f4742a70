/**
 * `buildRun` (./jsonl.ts) a few samples at a time: the run model of an imported file is rebuilt from its events in
 * slices of at most `sliceMs`, yielding to the page between them, so opening a large run is no long task.
 */

import { environmentMetricsOf, forkContinuationOf, runEvents, type JsonlReadResult } from "./jsonl.js";
import { yieldToPage } from "./export-slices.js";
import { RunModel } from "./run-model.js";

export interface BuildOptions {
  /** The longest stretch of work between two yields. Default 8 ms. */
  sliceMs?: number;
  yieldToPage?: () => Promise<void>;
  /**
   * Stops the building between slices (it rejects with the signal's reason): the import was superseded (the page's
   * `claimShow`, ../store.ts), and its run is not wanted any more.
   */
  signal?: AbortSignal;
}

export async function buildRunInSlices(read: Pick<JsonlReadResult, "samples" | "footer">, options: BuildOptions = {}): Promise<{ model: RunModel; scenario: unknown }> {
  const sliceMs = options.sliceMs ?? 8;
  const pause = options.yieldToPage ?? yieldToPage;
  const { signal } = options;
  const stopIfAborted = () => {
    if (signal?.aborted) throw signal.reason ?? new DOMException("The import was superseded", "AbortError");
  };
  stopIfAborted();
  const model = new RunModel();
  let start = performance.now();
  for (const event of runEvents(read)) {
    model.apply(event);
    if (performance.now() - start >= sliceMs) {
      await pause();
      stopIfAborted();
      start = performance.now();
    }
  }
  model.setEnvironmentMetrics(environmentMetricsOf(read.footer));
  model.setForkContinuation(forkContinuationOf(read.footer));
  return { model, scenario: read.footer?.scenario ?? null };
}
