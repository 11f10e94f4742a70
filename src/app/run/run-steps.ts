/**
 * The steps of a run read from several files (issue 19 item 4): the values a step selector offers, each with how
 * many samples it holds and the filter expression that shows them. A run's steps are its samples' `step` (NeMo RL's
 * from the file name, verl's and TRL's own field) where they have two or more; else, for a run of several files, the
 * file each sample came from (`imported.fields.source.file`, ../../scenario/imports/steps.ts).
 */

export interface RunStep {
  /** What the selector shows (`12`, `rollouts_b.jsonl`). */
  label: string;
  samples: number;
  /** The filter expression that shows its samples (../run/sample-filter.ts). */
  expression: string;
}

export interface RunSteps {
  by: "step" | "file";
  steps: RunStep[];
}

type Fields = Record<string, unknown>;

function fieldsOf(entry: unknown): Fields | null {
  const fields = (entry as { fields?: unknown } | null | undefined)?.fields;
  return typeof fields === "object" && fields !== null ? (fields as Fields) : null;
}

/** The file a sample of a run of several files came from (null: one file's run, or not imported). */
export function sampleFile(entry: unknown): string | null {
  const source = fieldsOf(entry)?.source as { file?: unknown } | undefined;
  return typeof source?.file === "string" ? source.file : null;
}

/** The steps of a run by its final batch's `imported` column; null when it has fewer than two. */
export function runSteps(imported: readonly unknown[] | null | undefined): RunSteps | null {
  if (!imported?.length) return null;
  const steps = new Map<number, number>();
  const files = new Map<string, number>();
  for (const entry of imported) {
    const step = fieldsOf(entry)?.step;
    if (typeof step === "number" && Number.isFinite(step)) steps.set(step, (steps.get(step) ?? 0) + 1);
    const file = sampleFile(entry);
    if (file !== null) files.set(file, (files.get(file) ?? 0) + 1);
  }
  if (steps.size >= 2) {
    return { by: "step", steps: [...steps].sort((a, b) => a[0] - b[0]).map(([step, samples]) => ({ label: String(step), samples, expression: `step == ${step}` })) };
  }
  if (files.size >= 2) {
    return { by: "file", steps: [...files].map(([file, samples]) => ({ label: file, samples, expression: `file == "${file.replace(/["\\]/g, "\\$&")}"` })) };
  }
  return null;
}
