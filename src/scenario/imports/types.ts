/** What every dump importer shares: the lab sample line it makes, and how it says a record is not what it expects. */

/** Fields of a dump the lab has no place for, kept on the sample (as the batch column `imported`) and shown with it. */
export interface ImportedFields {
  /** The dump's format (`nemo-rl`, `verl`, …). */
  format: string;
  fields: Record<string, unknown>;
}

/** A lab sample line (src/scenario/jsonl-reader.ts `sampleLineSchema`) made from one record of a dump. */
export interface ConvertedSample {
  idx: number;
  task_name: string;
  message_log: { role: string; content: string; token_ids: number[]; generation_logprobs?: number[] }[];
  total_reward: number | null;
  termination: string | null;
  imported: ImportedFields;
}

/** A record that is not what its format's writer writes: the field path and what is wrong, for the line's problem. */
export class RecordProblem extends Error {
  constructor(
    readonly path: string | null,
    message: string,
  ) {
    super(message);
  }
}

/** Where a record came from: its position among the file's records, and the file's name (a step number may be in it). */
export interface RecordSource {
  position: number;
  fileName?: string;
}

export interface DumpFormat {
  /** The `--format` name. */
  name: string;
  /** What its files are, for messages (`NeMo RL train_data_step{N}.jsonl / val_data_step{N}.jsonl`). */
  title: string;
  /** Whether a record looks like this format's (the first record of a file decides). */
  detect(record: Record<string, unknown>): boolean;
  convert(record: Record<string, unknown>, source: RecordSource): ConvertedSample;
}
