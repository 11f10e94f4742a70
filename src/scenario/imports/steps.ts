/**
 * Several files of one run (its steps: NeMo RL's train_data_step{N}.jsonl, verl's {step}.jsonl, …) read as one run,
 * in the page and on the command line alike: samples numbered in file order, each imported sample keeping its file
 * and its own idx (`imported.fields.source`), problems named with their file.
 */

import { emptyReadResult, type JsonlReadResult, type SampleLine } from "../jsonl-reader.js";

/** Where an imported sample came from, when its run was read from several files. */
export interface SampleSource {
  file: string;
  idx: number;
}

/** Gives a sample of file `fileName` its number `idx` in the run of several files, keeping its own idx. */
export function adoptSample(sample: SampleLine, fileName: string, idx: number): void {
  const imported = (sample as { imported?: { fields?: Record<string, unknown> } }).imported;
  if (imported?.fields) imported.fields.source = { file: fileName, idx: sample.idx } satisfies SampleSource;
  sample.idx = idx;
}

/**
 * The reads of several files (their samples adopted already) as one run's read: counts summed, problems in file
 * order with their file named. A metrics line belongs to one run of the lab's: several files have none.
 */
export function mergeReads(files: readonly { fileName: string; read: JsonlReadResult }[]): JsonlReadResult {
  if (files.length === 1) return files[0]!.read;
  const merged = emptyReadResult();
  for (const { fileName, read } of files) {
    for (const s of read.samples) merged.samples.push(s);
    merged.validLines += read.validLines;
    merged.badLines += read.badLines;
    merged.problems.push(...read.problems.map((p) => ({ ...p, file: fileName })));
    merged.problemCount += read.problemCount;
    merged.linesRead += read.linesRead;
    merged.bytesRead += read.bytesRead;
    merged.maxBufferedChars = Math.max(merged.maxBufferedChars, read.maxBufferedChars);
  }
  return merged;
}
