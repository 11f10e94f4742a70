/**
 * The machine-readable report, `<out>/report.json`: what a run (or one shard of it) compared, with everything the
 * text and HTML reports are rendered from, and what `npm run regress -- merge` needs to check that shard reports
 * belong together (the suite's scenarios and tolerances, the backend, the shard). `seconds` is the only
 * wall-clock field: two runs of the same suite give identical reports apart from it.
 */

import { z } from "zod";
import type { FloatDrift, MetricDelta, SampleDivergence, ScenarioComparison } from "./compare.js";
import { fieldPath, formatShard, type Shard } from "./suite.js";

export const REPORT_FORMAT = "rollout-lab/regress-report/2";

/**
 * A scenario without a comparison: its run failed (`run`: a regression, exit status 1), or its input is bad
 * (`input`: the scenario file or its golden cannot be read or is damaged; exit status 2).
 */
export interface FailedRun {
  name: string;
  kind: "run" | "input";
  detail: string;
}

export interface RegressReport {
  format: typeof REPORT_FORMAT;
  /** `file` as the command line named it (for titles); `scenarios` (names, in suite order) and `tolerances` identify the suite. */
  suite: { file: string; scenarios: string[]; tolerances: Record<string, number> };
  backend: "node" | "node-webgpu" | "wasm" | "webgpu";
  /** The tolerance of every float the suite's `tolerances` does not name (`DEFAULT_FLOAT_TOLERANCE`). */
  defaultTolerance: number;
  /** With `--repeat N`: N (each scenario ran N times and its runs were compared with each other); else 1. */
  repeat: number;
  /** The shard this report covers; null: the whole suite (an unsharded run, or a merge). */
  shard: Shard | null;
  /** One per scenario of the shard that ran (skipped ones included), in suite order. */
  comparisons: ScenarioComparison[];
  failed: FailedRun[];
  /** Wall-clock seconds of the run (of a merge: summed over its shards). */
  seconds: number;
}

const shardSchema = z
  .strictObject({ index: z.int().min(1), count: z.int().min(1) })
  .refine((s) => s.index <= s.count, { error: "expected index ≤ count" });

const reportSchema = z.strictObject({
  format: z.literal(REPORT_FORMAT, { error: `expected "${REPORT_FORMAT}"` }),
  suite: z.strictObject({
    file: z.string(),
    scenarios: z.array(z.string()).min(1),
    tolerances: z.record(z.string(), z.number()),
  }),
  backend: z.enum(["node", "node-webgpu", "wasm", "webgpu"]),
  defaultTolerance: z.number().nonnegative(),
  repeat: z.int().min(1),
  shard: shardSchema.nullable(),
  // Checked down to what a merge relies on (names, statuses); the divergence and metric details come from our writer.
  comparisons: z.array(
    z.strictObject({
      name: z.string(),
      status: z.enum(["ok", "regressed", "missing-golden", "skipped", "flaky"]),
      reason: z.string().optional(),
      missing: z.array(z.string()),
      samples: z.custom<SampleDivergence | null>((v) => typeof v === "object", { error: "expected an object or null" }),
      metrics: z.array(z.custom<MetricDelta>((v) => typeof v === "object" && v !== null, { error: "expected an object" })),
      drift: z.custom<FloatDrift>((v) => typeof v === "object" && v !== null, { error: "expected an object" }),
      repeat: z.strictObject({ runs: z.int().min(1), differing: z.int().min(2).nullable() }).optional(),
    }),
  ),
  failed: z.array(z.strictObject({ name: z.string(), kind: z.enum(["run", "input"]), detail: z.string() })),
  seconds: z.number(),
});

export function reportJson(report: RegressReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** Parses a report.json; throws an Error naming `source` and each problem as `field.path: what`. */
export function parseReportText(text: string, source: string): RegressReport {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Error(`${source}: not valid JSON: ${(e as Error).message}`);
  }
  const result = reportSchema.safeParse(value);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${fieldPath(issue.path, "(report)")}: ${issue.message}`);
    throw new Error(`${source}: not a regress report: ${problems.join("; ")}`);
  }
  return result.data;
}

/** Whether a comparison fails the suite: a regression, a missing golden, runs that differ from each other. */
export function isFailing(c: ScenarioComparison): boolean {
  return c.status === "regressed" || c.status === "missing-golden" || c.status === "flaky";
}

/**
 * The exit status of a report: 2 when an input was bad (a scenario or golden that cannot be read, damaged), else
 * 1 on a regression, a missing golden, a flaky scenario or a failed run, else 0.
 */
export function reportExitCode(report: RegressReport): 0 | 1 | 2 {
  if (report.failed.some((f) => f.kind === "input")) return 2;
  return report.failed.length > 0 || report.comparisons.some(isFailing) ? 1 : 0;
}

/** ` (shard i/n)`, or "" for the whole suite. */
export function shardNote(report: Pick<RegressReport, "shard">): string {
  return report.shard ? ` (shard ${formatShard(report.shard)})` : "";
}

/** `, backend wasm`, or "" on node; `, 3 runs each` with --repeat 3. */
export function backendNote(report: Pick<RegressReport, "backend" | "repeat">): string {
  return `${report.backend === "node" ? "" : `, backend ${report.backend}`}${report.repeat > 1 ? `, ${report.repeat} runs each` : ""}`;
}

export function reportTitle(report: RegressReport): string {
  return `Regression report: ${report.suite.file}${shardNote(report)}${backendNote(report)}`;
}
