/**
 * The regression suite file: `{"scenarios": [paths relative to the suite file], "tolerances": {metric: absolute}}`.
 * Checked like a scenario file: unknown keys and bad types are errors naming the field path.
 */

import { LabError } from "../core/index.js";
import { basename } from "node:path";
import { z } from "zod";
import { describeJsonValueProblem, findJsonValueProblem } from "../core/index.js";
import { parseJsonText } from "../scenario/json-text.js";
import { unknownKeyProblem } from "../scenario/allowed-keys.js";

const suiteSchema = z.strictObject(
  {
    scenarios: z
      .array(z.string({ error: "expected a scenario file path" }).min(1, { error: "expected a scenario file path" }), {
        error: "expected a list of scenario file paths",
      })
      .min(1, { error: "expected at least one scenario" }),
    tolerances: z
      .record(
        z.string(),
        z.number({ error: "expected an absolute tolerance (a number ≥ 0)" }).nonnegative({
          error: "expected an absolute tolerance (a number ≥ 0)",
        }),
        { error: "expected an object of metric name → absolute tolerance" },
      )
      .optional(),
  },
  { error: "expected a suite object {scenarios, tolerances}" },
);

export type Suite = { scenarios: string[]; tolerances: Record<string, number> };

export class SuiteError extends LabError {
  override name = "SuiteError";
  override readonly code = "invalid_suite";
  constructor(readonly problems: string[]) {
    super(problems.join("\n"));
  }
}

/** `a.b[0].c` for a zod issue path; `root` for the empty path. */
export function fieldPath(path: readonly PropertyKey[], root = "(suite)"): string {
  let out = "";
  for (const part of path) out += typeof part === "number" ? `[${part}]` : `${out ? "." : ""}${String(part)}`;
  return out || root;
}

/**
 * Parses and checks a suite object; throws SuiteError listing each problem as `field.path: what` (a value nested
 * deeper than the lab's JSON depth limit, or with a `__proto__` key, first: src/core/json-value.ts).
 */
export function parseSuite(value: unknown): Suite {
  const shape = findJsonValueProblem(value);
  if (shape) throw new SuiteError([describeJsonValueProblem(shape, [], "(suite)")]);
  const result = suiteSchema.safeParse(value);
  if (!result.success) {
    throw new SuiteError(
      result.error.issues.flatMap((issue) =>
        issue.code === "unrecognized_keys"
          ? issue.keys.map((k) => unknownKeyProblem(fieldPath([...issue.path, k]), suiteSchema, value, issue.path))
          : [`${fieldPath(issue.path)}: ${issue.message}`],
      ),
    );
  }
  const suite = { scenarios: result.data.scenarios, tolerances: result.data.tolerances ?? {} };
  const seen = new Map<string, number>();
  const problems: string[] = [];
  suite.scenarios.forEach((path, i) => {
    const name = scenarioName(path);
    if (seen.has(name)) problems.push(`scenarios[${i}]: scenario name '${name}' is also scenarios[${seen.get(name)}]'s`);
    else seen.set(name, i);
  });
  if (problems.length) throw new SuiteError(problems);
  return suite;
}

/**
 * Parses suite text (JSON), naming the line and column of a syntax error and the field path of a schema error; given
 * the file's bytes, bytes that are not UTF-8 are an error naming the byte.
 */
export function parseSuiteText(input: string | Uint8Array, source = "suite"): Suite {
  return parseSuite(parseJsonText(input, source, (problem) => new SuiteError([problem])));
}

/** A scenario's name: its file name without `.json`; it names its golden and output folders. */
export function scenarioName(path: string): string {
  return basename(path).replace(/\.json$/i, "");
}

export interface Shard {
  /** 1-based. */
  index: number;
  count: number;
}

/** Parses `i/n` (1 ≤ i ≤ n); throws with a message on anything else. */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index < 1 || index > count) throw new Error(`--shard expects i/n with 1 ≤ i ≤ n, got '${text}'`);
  return { index, count };
}

/** `i/n`, as `--shard` takes it. */
export function formatShard(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}

/** The scenarios of one shard: those whose position % n == i − 1. */
export function selectShard<T>(items: readonly T[], shard: Shard | null): T[] {
  return shard ? items.filter((_, k) => k % shard.count === shard.index - 1) : [...items];
}
