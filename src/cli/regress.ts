/**
 * `npm run regress -- <suite.json> [--backend node|wasm|webgpu] [--update] [--shard i/n] [--out <dir>] [--goldens <dir>]`:
 * runs each scenario of a suite headless (in Node, or with `--backend wasm|webgpu` in the built app in headless
 * Chromium: see src/regress/browser.ts), writes its transcripts (`samples.jsonl`) and metrics
 * (`metrics.json`, no `timing/` keys) to `<out>/<name>/`, and compares them with the goldens in
 * `<goldens>/<name>/` (default: `goldens/` beside the suite file). `--update` rewrites the goldens instead.
 * Writes `<out>/report.json` (src/regress/report-json.ts) and `<out>/report.html`. Exit status 0 when all match, 1
 * on a regression, a missing golden or a failed run, 2 on bad usage. Browser runs are compared with the same (Node)
 * goldens, their generation logprobs within a per-backend tolerance; they cannot `--update` (goldens come from the
 * node backend) and skip replay scenarios.
 *
 * `npm run regress -- merge <shard-out-dir>... [--out <dir>]`: merges the `report.json` of each shard's `--out`
 * folder into the whole suite's (src/regress/merge.ts), writes it with its `report.html` to `<out>` and prints the
 * text summary. Exit status as a run's; 2 on bad usage or shard reports that do not merge (named: a missing,
 * duplicated or foreign shard).
 */

import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { isEntryPoint } from "./entry.js";
import { nodeRunOptions, UsageError } from "./node-run.js";
import {
  BrowserSetupError,
  browserSkipReason,
  LOGPROB_TOLERANCE,
  startBrowserRunner,
  type BrowserBackend,
  type BrowserRunner,
} from "../regress/browser.js";
import { compareScenario, metricsJson, skippedScenario, toJsonl, type ScenarioComparison } from "../regress/compare.js";
import { mergeReports, MergeError } from "../regress/merge.js";
import { renderHtmlReport } from "../regress/report-html.js";
import {
  backendNote,
  parseReportText,
  REPORT_FORMAT,
  reportFails,
  reportJson,
  reportTitle,
  shardNote,
  type FailedRun,
  type RegressReport,
} from "../regress/report-json.js";
import { failedLine, renderTextReport } from "../regress/report-text.js";
import { parseShard, parseSuiteText, scenarioName, selectShard, SuiteError, type Shard } from "../regress/suite.js";
import { withoutTiming } from "../scenario/result.js";
import { runScenario } from "../scenario/run.js";
import { parseScenarioText, ScenarioError } from "../scenario/schema.js";

const USAGE = [
  "usage: npm run regress -- <suite.json> [--backend node|wasm|webgpu] [--update] [--shard i/n] [--out <dir>] [--goldens <dir>]",
  "       npm run regress -- merge <shard-out-dir>... [--out <dir>]   (merges the shards' report.json into one)",
].join("\n");
const DEFAULT_OUT = "regress/out";
const ROOT = resolve(import.meta.dirname, "../..");

type Backend = "node" | BrowserBackend;

interface Args {
  suite: string;
  backend: Backend;
  update: boolean;
  shard: Shard | null;
  out: string;
  goldens: string | null;
}


function parseArgs(argv: string[]): Args {
  const positional: string[] = [];
  let update = false;
  let shard: Shard | null = null;
  let out = DEFAULT_OUT;
  let goldens: string | null = null;
  let backend: Backend = "node";
  const value = (i: number, flag: string): string => {
    const v = argv[i];
    if (v === undefined || v.startsWith("--")) throw new UsageError(`${flag} needs a value`, USAGE);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--update") update = true;
    else if (arg === "--backend") {
      const name = value(++i, "--backend");
      if (name !== "node" && name !== "wasm" && name !== "webgpu") throw new UsageError(`unknown backend '${name}' (expected node, wasm or webgpu)`, USAGE);
      backend = name;
    } else if (arg === "--shard") {
      try {
        shard = parseShard(value(++i, "--shard"));
      } catch (e) {
        throw e instanceof UsageError ? e : new UsageError((e as Error).message, USAGE);
      }
    } else if (arg === "--out") out = value(++i, "--out");
    else if (arg === "--goldens") goldens = value(++i, "--goldens");
    else if (arg === "--help" || arg === "-h") throw new UsageError(null, USAGE);
    else if (arg.startsWith("-")) throw new UsageError(`unknown option ${arg}`, USAGE);
    else positional.push(arg);
  }
  if (positional.length !== 1) throw new UsageError("expected exactly one suite file", USAGE);
  if (update && backend !== "node") {
    throw new UsageError(`--update with --backend ${backend}: goldens come from the node backend (run --update without --backend)`, USAGE);
  }
  return { suite: positional[0]!, backend, update, shard, out, goldens };
}


type RunOutcome = { samplesJsonl: string; metrics: Record<string, unknown> } | { skipped: string };

async function runOne(path: string, browser: BrowserRunner | null): Promise<RunOutcome> {
  const scenario = parseScenarioText(await readFile(path, "utf8"), path);
  if (browser) {
    const skip = browserSkipReason(scenario);
    if (skip) return { skipped: skip };
    const replayRun = scenario.policy.kind === "replay" ? await readFile(resolve(dirname(path), scenario.policy.file), "utf8") : undefined;
    const result = await browser.run(scenario, replayRun);
    const metrics = JSON.parse(JSON.stringify(withoutTiming(result.metrics))) as Record<string, unknown>;
    return { samplesJsonl: toJsonl(result.samples), metrics };
  }
  const result = await runScenario(scenario, await nodeRunOptions(path));
  // Through JSON once, so the metrics compared are the ones the golden file holds.
  const metrics = JSON.parse(JSON.stringify(withoutTiming(result.metrics))) as Record<string, unknown>;
  return { samplesJsonl: toJsonl(result.samples), metrics };
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

function usageExit(e: UsageError): number {
  process.stderr.write(`${e.detail ? `error: ${e.detail}\n` : ""}${USAGE}\n`);
  return e.detail ? 2 : 0;
}

/** Prints the text summary, writes report.json and report.html; the exit status. */
async function writeReports(report: RegressReport, outDir: string, note: string): Promise<number> {
  process.stdout.write(renderTextReport(report.comparisons, report.failed.length));
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, "report.json"), reportJson(report));
  await writeFile(join(outDir, "report.html"), renderHtmlReport(report.comparisons, reportTitle(report)));
  process.stdout.write(`report: ${join(outDir, "report.html")} (${note})\n`);
  return reportFails(report) ? 1 : 0;
}

function parseMergeArgs(argv: string[]): { dirs: string[]; out: string } {
  const dirs: string[] = [];
  let out = DEFAULT_OUT;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--out") {
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) throw new UsageError("--out needs a value", USAGE);
      out = v;
    } else if (arg === "--help" || arg === "-h") throw new UsageError(null, USAGE);
    else if (arg.startsWith("-")) throw new UsageError(`unknown option ${arg} (merge takes shard output folders and --out)`, USAGE);
    else dirs.push(arg);
  }
  if (!dirs.length) throw new UsageError("merge needs the output folder (--out) of each shard", USAGE);
  if (dirs.some((d) => resolve(d) === resolve(out))) {
    throw new UsageError(`--out ${out} is one of the shard folders: its report.json would be overwritten (pick another --out)`, USAGE);
  }
  return { dirs, out };
}

async function mergeMain(argv: string[]): Promise<number> {
  let args: { dirs: string[]; out: string };
  try {
    args = parseMergeArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    return usageExit(e);
  }
  let merged: RegressReport;
  try {
    const shards = [];
    for (const dir of args.dirs) {
      const path = join(dir, "report.json");
      const text = await readOptional(path);
      if (text === null) throw new MergeError(`${path} does not exist (run npm run regress -- <suite> --shard i/n --out ${dir} first)`);
      shards.push({ source: dir, report: parseReportText(text, path) });
    }
    merged = mergeReports(shards);
  } catch (e) {
    process.stderr.write(`error: cannot merge: ${(e as Error).message}\n`);
    return 2;
  }
  for (const f of merged.failed) process.stdout.write(`${failedLine(f)}\n`);
  const outDir = resolve(args.out);
  const shards = `${args.dirs.length} shard${args.dirs.length === 1 ? "" : "s"} merged`;
  return writeReports(merged, outDir, `${shards}, ${merged.seconds.toFixed(1)}s of runs${backendNote(merged)}`);
}

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === "merge") return mergeMain(argv.slice(1));
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    return usageExit(e);
  }
  const suitePath = resolve(args.suite);
  let suite;
  try {
    suite = parseSuiteText(await readFile(suitePath, "utf8"), args.suite);
  } catch (e) {
    const problems = e instanceof SuiteError ? e.problems : [(e as Error).message];
    process.stderr.write(`error: invalid suite ${args.suite}:\n${problems.map((p) => `  ${p}`).join("\n")}\n`);
    return 1;
  }
  const goldensDir = resolve(args.goldens ?? join(dirname(suitePath), "goldens"));
  const outDir = resolve(args.out);
  const scenarios = selectShard(suite.scenarios, args.shard);
  const started = performance.now();
  let browser: BrowserRunner | null = null;
  if (args.backend !== "node") {
    try {
      browser = await startBrowserRunner(ROOT, args.backend);
    } catch (e) {
      if (!(e instanceof BrowserSetupError)) throw e;
      process.stderr.write(`error: --backend ${args.backend}: ${e.message}\n`);
      return 1;
    }
  }
  const options = args.backend === "node" ? {} : { logprobTolerance: LOGPROB_TOLERANCE[args.backend] };
  const comparisons: ScenarioComparison[] = [];
  const failed: FailedRun[] = [];
  try {
    for (const rel of scenarios) {
      const name = scenarioName(rel);
      const path = resolve(dirname(suitePath), rel);
      const comparison = await runAndCompare(name, path, browser, args, goldensDir, outDir, suite.tolerances, options);
      if (comparison && "detail" in comparison) failed.push(comparison);
      else if (comparison) comparisons.push(comparison);
    }
  } finally {
    await browser?.close();
  }
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  if (args.update) {
    const shard = shardNote({ shard: args.shard });
    process.stdout.write(`goldens written to ${goldensDir} for ${scenarios.length - failed.length} scenarios${shard} in ${seconds.toFixed(1)}s\n`);
    return failed.length ? 1 : 0;
  }
  const report: RegressReport = {
    format: REPORT_FORMAT,
    suite: { file: args.suite, scenarios: suite.scenarios.map(scenarioName), tolerances: suite.tolerances },
    backend: args.backend,
    logprobTolerance: options.logprobTolerance ?? null,
    shard: args.shard,
    comparisons,
    failed,
    seconds,
  };
  return writeReports(report, outDir, `${seconds.toFixed(1)}s${shardNote(report)}${backendNote(report)}`);
}

/** Runs one scenario and compares it with its golden (or rewrites the golden): null after --update, a FailedRun when the run failed. */
async function runAndCompare(
  name: string,
  path: string,
  browser: BrowserRunner | null,
  args: Args,
  goldensDir: string,
  outDir: string,
  tolerances: Record<string, number>,
  options: { logprobTolerance?: number },
): Promise<ScenarioComparison | FailedRun | null> {
  const t0 = performance.now();
  let run;
  try {
    const outcome = await runOne(path, browser);
    if ("skipped" in outcome) return skippedScenario(name, outcome.skipped);
    run = outcome;
  } catch (e) {
    const failed = { name, detail: e instanceof ScenarioError ? e.problems.join("; ") : (e as Error).message };
    process.stdout.write(`${failedLine(failed)}\n`);
    return failed;
  }
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  const metrics = metricsJson(run.metrics);
  await mkdir(join(outDir, name), { recursive: true });
  await writeFile(join(outDir, name, "samples.jsonl"), run.samplesJsonl);
  await writeFile(join(outDir, name, "metrics.json"), metrics);
  if (args.update) {
    await mkdir(join(goldensDir, name), { recursive: true });
    await writeFile(join(goldensDir, name, "samples.jsonl"), run.samplesJsonl);
    await writeFile(join(goldensDir, name, "metrics.json"), metrics);
    process.stdout.write(`updated    ${name} (${seconds}s)\n`);
    return null;
  }
  const goldenSamples = await readOptional(join(goldensDir, name, "samples.jsonl"));
  const goldenMetricsText = await readOptional(join(goldensDir, name, "metrics.json"));
  const goldenMetrics = goldenMetricsText === null ? null : (JSON.parse(goldenMetricsText) as Record<string, unknown>);
  return compareScenario(name, run, { samplesJsonl: goldenSamples, metrics: goldenMetrics }, tolerances, options);
}

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
