/**
 * `buildRun` (./jsonl.ts) a few samples at a time: the run model of an imported file is rebuilt from its events in
 * slices of at most `sliceMs`, yielding to the page between them, so opening a large run is no long task.
 */

import { runEvents, type JsonlReadResult } from "./jsonl.js";
import { yieldToPage } from "./export-slices.js";
import { RunModel } from "./run-model.js";

export async function buildRunInSlices(
  read: Pick<JsonlReadResult, "samples" | "footer">,
  options: { sliceMs?: number; yieldToPage?: () => Promise<void> } = {},
): Promise<{ model: RunModel; scenario: unknown }> {
  const sliceMs = options.sliceMs ?? 8;
  const pause = options.yieldToPage ?? yieldToPage;
  const model = new RunModel();
  let start = performance.now();
  for (const event of runEvents(read)) {
    model.apply(event);
    if (performance.now() - start >= sliceMs) {
      await pause();
      start = performance.now();
    }
  }
  return { model, scenario: read.footer?.scenario ?? null };
}
