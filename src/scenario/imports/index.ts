/**
 * Rollout dumps of other RL libraries, read as the lab's runs: each format maps one record of its files to a lab
 * sample line, keeping what the lab has no place for. The format is the first record's (`detectFormat`), or named.
 */

import { nemoGymFormat } from "./nemo-gym.js";
import { nemoRlFormat } from "./nemo-rl.js";
import { skyrlFormat } from "./skyrl.js";
import { trlFormat } from "./trl.js";
import type { DumpFormat } from "./types.js";
import { verifiersFormat } from "./verifiers.js";
import { verlFormat } from "./verl.js";

export { RecordProblem, type ConvertedSample, type DumpFormat, type ImportedFields, type RecordSource } from "./types.js";

export const DUMP_FORMATS: readonly DumpFormat[] = [nemoRlFormat, verlFormat, nemoGymFormat, skyrlFormat, verifiersFormat, trlFormat];

/** The `--format` names: `auto` (detect), `lab` (the lab's own JSONL), or a dump format's. */
export const FORMAT_NAMES = ["auto", "lab", ...DUMP_FORMATS.map((f) => f.name)] as const;

export function dumpFormat(name: string): DumpFormat | undefined {
  return DUMP_FORMATS.find((f) => f.name === name);
}

/** The dump format a record is in, or null (a lab line, or a shape no importer knows). */
export function detectFormat(record: Record<string, unknown>): DumpFormat | null {
  return DUMP_FORMATS.find((f) => f.detect(record)) ?? null;
}

/** What the lab reads, in words, for the error on a record of an unknown shape. */
export function knownFormats(): string {
  return ["the lab's own JSONL export or result (message_log, idx, task_name)", ...DUMP_FORMATS.map((f) => f.title)].join("; ");
}
