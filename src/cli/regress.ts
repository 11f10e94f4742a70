/**
 * `rollout-lab regress <suite.json> [options]` (`npm run regress -- …` in the checkout): runs each scenario of a
 * suite headless (in Node; with `--backend node-webgpu` in Node with model policies on WebGPU through Dawn, for a
 * GPU machine without a browser; or with `--backend wasm|webgpu` in the built app in headless Chromium: see
 * src/regress/browser.ts), writes its transcripts (`samples.jsonl`) and metrics (`metrics.json`, no `timing/`
 * keys) to `<out>/<name>/` (default: `out/` beside the suite file), and compares them with the goldens in `<goldens>/<name>/` (default: `goldens/` beside
 * the suite file) by the rules of src/regress/compare.ts: tokens and texts exactly, floats within a tolerance.
 * `--update` rewrites the goldens instead. Writes `<out>/report.json` (src/regress/report-json.ts) and
 * `<out>/report.html`; `--junit` and `--summary` write JUnit XML and a Markdown step summary. `--repeat N` runs
 * each scenario N times and fails one whose runs differ from each other. A browser scenario that fails keeps a
 * Playwright trace of its page in `<out>/<name>/trace.zip`.
 *
 * `rollout-lab regress merge <shard-out-dir>... [--out <dir>] [--junit <file>] [--summary <file>]`: merges the
 * `report.json` of each shard's `--out` folder into the whole suite's (src/regress/merge.ts).
 *
 * Exit status: 0 all match; 1 a regression, a missing golden, a flaky scenario or a failed run; 2 a bad suite,
 * scenario, golden or argument, a browser backend that cannot start, or shard reports that do not merge.
 */

import { statSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { ensureBuiltApp } from "./build-app.js";
import { chosenEnvironmentsDir, chooseEnvironmentsDir } from "./checkout-environments.js";
import { isEntryPoint } from "./entry.js";
import { nodeRunOptions, UsageError } from "./node-run.js";
import { withGuardedStdout } from "./output-file.js";
import { BrowserSetupError, browserSkipReason, startBrowserRunner, type BrowserRunner } from "../regress/browser.js";
import {
  compareRepeats,
  compareScenario,
  DEFAULT_FLOAT_TOLERANCE,
  metricsJson,
  skippedScenario,
  toJsonl,
  type ScenarioArtifacts,
  type ScenarioComparison,
} from "../regress/compare.js";
import { readGolden, GoldenError } from "../regress/golden.js";
import { mergeReports, MergeError } from "../regress/merge.js";
import { renderJunit, renderMarkdownSummary } from "../regress/report-ci.js";
import { renderHtmlReport } from "../regress/report-html.js";
import {
  backendNote,
  isFailing,
  parseReportText,
  REPORT_FORMAT,
  reportExitCode,
  reportJson,
  reportTitle,
  shardNote,
  type FailedRun,
  type RegressReport,
} from "../regress/report-json.js";
import { failedLine, renderTextReport, summaryLine } from "../regress/report-text.js";
import { parseShard, parseSuiteText, scenarioName, selectShard, SuiteError, type Shard, type Suite } from "../regress/suite.js";
import { parseSavedRun, withoutTiming } from "../scenario/result.js";
import { runScenario } from "../scenario/run.js";
import { decodeUtf8 } from "../scenario/utf8.js";
import { parseScenarioText, ScenarioError, type Scenario } from "../scenario/schema.js";

const USAGE = [
  "usage: rollout-lab regress <suite.json> [--backend node|node-webgpu|wasm|webgpu] [--update] [--repeat N] [--shard i/n]",
  "                          [--out <dir>] [--goldens <dir>] [--junit <file>] [--summary <file>] [--environments <dir>]",
  "       rollout-lab regress merge <shard-out-dir>... [--out <dir>] [--junit <file>] [--summary <file>]",
  "exit status: 0 all match; 1 a regression, missing golden, flaky scenario or failed run; 2 bad input or usage",
].join("\n");
const ROOT = resolve(import.meta.dirname, "../..");
/** Most runs `--repeat` takes (each is a whole run of the scenario). */
const MAX_REPEAT = 100;

type Backend = RegressReport["backend"];

interface ReportFiles {
  out: string;
  junit: string | null;
  summary: string | null;
}

interface Args extends ReportFiles {
  suite: string;
  backend: Backend;
  update: boolean;
  repeat: number;
  shard: Shard | null;
  goldens: string | null;
}

/** Reads `--flag value` pairs and positional arguments; `flags` says which flags take a value. */
function readArgv(argv: string[], valued: readonly string[], switches: readonly string[]): { values: Map<string, string>; on: Set<string>; positional: string[] } {
  const values = new Map<string, string>();
  const on = new Set<string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") throw new UsageError(null, USAGE);
    if (valued.includes(arg)) {
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) throw new UsageError(`${arg} needs a value`, USAGE);
      values.set(arg, v);
    } else if (switches.includes(arg)) on.add(arg);
    else if (arg.startsWith("-")) throw new UsageError(`unknown option ${arg}`, USAGE);
    else positional.push(arg);
  }
  return { values, on, positional };
}

function parseArgs(argv: string[]): Args {
  const { values, on, positional } = readArgv(
    argv,
    ["--backend", "--shard", "--out", "--goldens", "--junit", "--summary", "--repeat", "--environments"],
    ["--update"],
  );
  const backend = values.get("--backend") ?? "node";
  if (backend !== "node" && backend !== "node-webgpu" && backend !== "wasm" && backend !== "webgpu") {
    throw new UsageError(`unknown backend '${backend}' (expected node, node-webgpu, wasm or webgpu)`, USAGE);
  }
  let shard: Shard | null = null;
  if (values.has("--shard")) {
    try {
      shard = parseShard(values.get("--shard")!);
    } catch (e) {
      throw new UsageError((e as Error).message, USAGE);
    }
  }
  const repeatText = values.get("--repeat") ?? "1";
  const repeat = /^\d+$/.test(repeatText) ? Number(repeatText) : NaN;
  if (!(repeat >= 1 && repeat <= MAX_REPEAT)) throw new UsageError(`--repeat expects a whole number of runs from 1 to ${MAX_REPEAT}, got '${repeatText}'`, USAGE);
  if (values.has("--environments")) {
    try {
      chooseEnvironmentsDir(values.get("--environments")!);
    } catch (e) {
      throw new UsageError((e as Error).message, USAGE);
    }
  }
  if (positional.length !== 1) throw new UsageError("expected exactly one suite file", USAGE);
  const update = on.has("--update");
  if (update && backend !== "node") {
    throw new UsageError(`--update with --backend ${backend}: goldens come from the node backend (run --update without --backend)`, USAGE);
  }
  return checkReportPaths({
    suite: positional[0]!,
    backend,
    update,
    repeat,
    shard,
    out: values.get("--out") ?? join(dirname(positional[0]!), "out"),
    goldens: values.get("--goldens") ?? null,
    junit: values.get("--junit") ?? null,
    summary: values.get("--summary") ?? null,
  });
}

type RunOutcome = ScenarioArtifacts | { skipped: string };

/** Through JSON once, so the metrics compared are the ones the golden file holds. */
const asStored = (metrics: Record<string, unknown>) => JSON.parse(JSON.stringify(withoutTiming(metrics))) as Record<string, unknown>;

/** A scenario file read and checked: a bad one is a FailedRun of kind input. */
async function readScenario(path: string): Promise<Scenario> {
  // Bytes: the parser decodes strict UTF-8 and names a bad byte.
  return parseScenarioText(await readFile(path), path);
}

/** The run a replay policy's `file` names, beside its scenario: one that cannot be read is the scenario's mistake. */
async function readReplayRun(scenarioPath: string, file: string): Promise<string> {
  try {
    return decodeUtf8(await readFile(resolve(dirname(scenarioPath), file)));
  } catch (e) {
    throw new ScenarioError([`policy.file: cannot use '${file}': ${(e as Error).message}`]);
  }
}

/** `replayRun`: the text of the run a replay policy names, read (and checked) once before the scenario's runs. */
async function runOnce(scenario: Scenario, path: string, browser: BrowserRunner | null, tracePath: string | null, backend: Backend, replayRun?: string): Promise<RunOutcome> {
  if (browser) {
    const skip = browserSkipReason(scenario);
    if (skip) return { skipped: skip };
    const result = await browser.run(scenario, { replayRun, tracePath });
    return { samplesJsonl: toJsonl(result.samples), metrics: asStored(result.metrics) };
  }
  // node-webgpu: a model policy's device forced to WebGPU (Dawn), as the browser backends force the page's.
  const run = backend === "node-webgpu" && scenario.policy.kind === "model" ? { ...scenario, policy: { ...scenario.policy, device: "webgpu" as const } } : scenario;
  const result = await runScenario(run, await nodeRunOptions(path));
  return { samplesJsonl: toJsonl(result.samples), metrics: asStored(result.metrics) };
}

const traceFile = (outDir: string, name: string, run: number) => join(outDir, name, run === 1 ? "trace.zip" : `trace-run${run}.zip`);

function usageExit(e: UsageError): number {
  process.stderr.write(`${e.detail ? `error: ${e.detail}\n` : ""}${USAGE}\n`);
  return e.detail ? 2 : 0;
}

/** Prints the text summary; writes report.json, report.html and the CI reports asked for; the exit status. */
async function writeReports(report: RegressReport, files: ReportFiles, note: string): Promise<number> {
  process.stdout.write(renderTextReport(report.comparisons, report.failed.length));
  const outDir = resolve(files.out);
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, "report.json"), reportJson(report));
  await writeFile(join(outDir, "report.html"), renderHtmlReport(report.comparisons, reportTitle(report), report.failed));
  const written = [join(outDir, "report.html")];
  if (files.junit) {
    await mkdir(dirname(resolve(files.junit)), { recursive: true });
    await writeFile(files.junit, renderJunit(report));
    written.push(files.junit);
  }
  if (files.summary) {
    await mkdir(dirname(resolve(files.summary)), { recursive: true });
    await writeFile(files.summary, renderMarkdownSummary(report));
    written.push(files.summary);
  }
  process.stdout.write(`report: ${written.join(", ")} (${note})\n`);
  return reportExitCode(report);
}

/** A suite that cannot be read still gives CI a JUnit file and a summary, with one error naming the problem. */
async function writeSuiteError(args: Pick<Args, "suite" | "backend" | "junit" | "summary">, problems: string[]): Promise<void> {
  if (!args.junit && !args.summary) return;
  const report: RegressReport = {
    format: REPORT_FORMAT,
    suite: { file: args.suite, scenarios: ["(suite)"], tolerances: {} },
    backend: args.backend,
    defaultTolerance: DEFAULT_FLOAT_TOLERANCE,
    repeat: 1,
    shard: null,
    comparisons: [],
    failed: [{ name: "(suite)", kind: "input", detail: `invalid suite ${args.suite}: ${problems.join("; ")}` }],
    seconds: 0,
  };
  for (const [file, text] of [
    [args.junit, renderJunit(report)],
    [args.summary, renderMarkdownSummary(report)],
  ] as const) {
    if (!file) continue;
    await mkdir(dirname(resolve(file)), { recursive: true });
    await writeFile(file, text);
  }
}

function parseMergeArgs(argv: string[]): ReportFiles & { dirs: string[] } {
  const { values, positional } = readArgv(argv, ["--out", "--junit", "--summary"], []);
  const out = values.get("--out") ?? "regress/out";
  if (!positional.length) throw new UsageError("merge needs the output folder (--out) of each shard", USAGE);
  if (positional.some((d) => resolve(d) === resolve(out))) {
    throw new UsageError(`--out ${out} is one of the shard folders: its report.json would be overwritten (pick another --out)`, USAGE);
  }
  return checkReportPaths({ dirs: positional, out, junit: values.get("--junit") ?? null, summary: values.get("--summary") ?? null });
}

/**
 * Refuses report paths that cannot be written, before anything runs: `--out` must be a folder (or not exist yet),
 * `--junit` and `--summary` files (or not exist yet).
 */
function checkReportPaths<T extends ReportFiles>(files: T): T {
  const kind = (path: string) => {
    try {
      return statSync(path).isDirectory() ? "folder" : "file";
    } catch {
      return null;
    }
  };
  /** The first existing folder above `path` must be one: a file there makes every folder below it impossible. */
  const blockedBy = (path: string): string | null => {
    for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
      const found = kind(dir);
      if (found === "file") return dir;
      if (found === "folder" || dirname(dir) === dir) return null;
    }
  };
  if (kind(files.out) === "file") throw new UsageError(`--out ${files.out} is a file: the reports go into a folder there`, USAGE);
  for (const [flag, path] of [["--out", files.out], ["--junit", files.junit], ["--summary", files.summary]] as const) {
    if (path === null) continue;
    if (flag !== "--out" && kind(path) === "folder") throw new UsageError(`${flag} ${path} is a folder: name the file to write`, USAGE);
    const file = blockedBy(path);
    if (file) throw new UsageError(`${flag} ${path} cannot be written: ${file} is a file, not a folder`, USAGE);
  }
  return files;
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

async function mergeMain(argv: string[]): Promise<number> {
  let args: ReturnType<typeof parseMergeArgs>;
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
      const text = await readOptional(path).catch((e: Error) => {
        throw new MergeError(`${path} cannot be read: ${e.message}`);
      });
      if (text === null) throw new MergeError(`${path} does not exist (run rollout-lab regress <suite> --shard i/n --out ${dir} first)`);
      shards.push({ source: dir, report: parseReportText(text, path) });
    }
    merged = mergeReports(shards);
  } catch (e) {
    process.stderr.write(`error: cannot merge: ${(e as Error).message}\n`);
    return 2;
  }
  for (const f of merged.failed) process.stdout.write(`${failedLine(f)}\n`);
  const shards = `${args.dirs.length} shard${args.dirs.length === 1 ? "" : "s"} merged`;
  return writeReports(merged, args, `${shards}, ${merged.seconds.toFixed(1)}s of runs${backendNote(merged)}`);
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
  let suite: Suite;
  try {
    suite = parseSuiteText(await readFile(suitePath), args.suite);
  } catch (e) {
    const problems = e instanceof SuiteError ? e.problems : [(e as Error).message];
    process.stderr.write(`error: invalid suite ${args.suite}:\n${problems.map((p) => `  ${p}`).join("\n")}\n`);
    await writeSuiteError(args, problems);
    return 2;
  }
  const goldensDir = resolve(args.goldens ?? join(dirname(suitePath), "goldens"));
  const outDir = resolve(args.out);
  if (goldensDir === outDir) {
    // Each scenario's run would be written over its golden before the two are compared: a regression would pass.
    return usageExit(new UsageError(`--out ${args.out} is the goldens folder: the runs would overwrite the goldens they are compared with (pick another --out)`, USAGE));
  }
  const scenarios = selectShard(suite.scenarios, args.shard);
  const started = performance.now();
  let browser: BrowserRunner | null = null;
  if (args.backend === "wasm" || args.backend === "webgpu") {
    const backend = args.backend;
    try {
      await ensureBuiltApp(ROOT).catch((e: Error) => {
        throw new BrowserSetupError(`cannot build the lab: ${e.message}`);
      });
      // The built lab bundles this checkout's environments/ already; a chosen folder's modules are loaded into it.
      browser = await startBrowserRunner(ROOT, backend, { environmentsDir: chosenEnvironmentsDir() });
    } catch (e) {
      if (!(e instanceof BrowserSetupError)) throw e;
      process.stderr.write(`error: --backend ${args.backend}: ${e.message}\n`);
      return 2;
    }
  }
  const comparisons: ScenarioComparison[] = [];
  const failed: FailedRun[] = [];
  let updated = 0;
  try {
    for (const rel of scenarios) {
      const name = scenarioName(rel);
      const path = resolve(dirname(suitePath), rel);
      const outcome = await runAndCompare(name, path, browser, args, goldensDir, outDir, suite.tolerances);
      if (outcome === "updated") updated++;
      else if ("detail" in outcome) {
        failed.push(outcome);
        process.stdout.write(`${failedLine(outcome)}\n`);
      } else {
        comparisons.push(outcome);
        if (args.update) process.stdout.write(`${summaryLine(outcome)}\n`);
      }
    }
  } finally {
    await browser?.close();
  }
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  const report: RegressReport = {
    format: REPORT_FORMAT,
    suite: { file: args.suite, scenarios: suite.scenarios.map(scenarioName), tolerances: suite.tolerances },
    backend: args.backend,
    defaultTolerance: DEFAULT_FLOAT_TOLERANCE,
    repeat: args.repeat,
    shard: args.shard,
    comparisons,
    failed,
    seconds,
  };
  if (args.update) {
    process.stdout.write(`goldens written to ${goldensDir} for ${updated} scenario${updated === 1 ? "" : "s"}${shardNote(report)} in ${seconds.toFixed(1)}s\n`);
    return reportExitCode(report);
  }
  return writeReports(report, args, `${seconds.toFixed(1)}s${shardNote(report)}${backendNote(report)}`);
}

/**
 * Runs one scenario (`--repeat` times) and compares it with its golden, or rewrites the golden: "updated", a
 * comparison (a flaky one, with --update, writes no golden), or a FailedRun (the run failed; or the scenario or
 * its golden is bad input).
 */
async function runAndCompare(
  name: string,
  path: string,
  browser: BrowserRunner | null,
  args: Args,
  goldensDir: string,
  outDir: string,
  tolerances: Record<string, number>,
): Promise<ScenarioComparison | FailedRun | "updated"> {
  const t0 = performance.now();
  let scenario: Scenario;
  try {
    scenario = await readScenario(path);
  } catch (e) {
    return { name, kind: "input", detail: e instanceof ScenarioError ? e.problems.join("; ") : (e as Error).message };
  }
  // A replay's saved run is input too: one that cannot be read, or is damaged, is refused before anything runs.
  let replayRun: string | undefined;
  if (scenario.policy.kind === "replay") {
    try {
      replayRun = await readReplayRun(path, scenario.policy.file);
      parseSavedRun(replayRun);
    } catch (e) {
      return { name, kind: "input", detail: e instanceof ScenarioError ? e.problems.join("; ") : `policy.file: cannot use '${scenario.policy.file}': ${(e as Error).message}` };
    }
  }
  await mkdir(join(outDir, name), { recursive: true });
  const runs: ScenarioArtifacts[] = [];
  for (let k = 1; k <= args.repeat; k++) {
    const tracePath = browser ? traceFile(outDir, name, k) : null;
    try {
      const outcome = await runOnce(scenario, path, browser, tracePath, args.backend, replayRun);
      if ("skipped" in outcome) return skippedScenario(name, outcome.skipped);
      runs.push(outcome);
    } catch (e) {
      const where = args.repeat > 1 ? ` (run ${k} of ${args.repeat})` : "";
      const trace = tracePath ? `; trace: ${tracePath}` : "";
      return { name, kind: "run", detail: `${(e as Error).message}${where}${trace}` };
    }
  }
  const run = runs[0]!;
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  const metrics = metricsJson(run.metrics);
  await writeFile(join(outDir, name, "samples.jsonl"), run.samplesJsonl);
  await writeFile(join(outDir, name, "metrics.json"), metrics);
  const repeats = compareRepeats(runs, tolerances);
  let comparison: ScenarioComparison | null = null;
  if (repeats) {
    const { run: differing, comparison: c } = repeats;
    comparison = { ...c, name, status: "flaky", repeat: { runs: args.repeat, differing } };
    await writeFile(join(outDir, name, `samples-run${differing}.jsonl`), runs[differing - 1]!.samplesJsonl);
  }
  if (!comparison && args.update) {
    await mkdir(join(goldensDir, name), { recursive: true });
    await writeFile(join(goldensDir, name, "samples.jsonl"), run.samplesJsonl);
    await writeFile(join(goldensDir, name, "metrics.json"), metrics);
    process.stdout.write(`updated    ${name} (${seconds}s${args.repeat > 1 ? `, ${args.repeat} identical runs` : ""})\n`);
    await keepTraces(outDir, name, args.repeat, null);
    return "updated";
  }
  if (!comparison) {
    let golden;
    try {
      golden = await readGolden(join(goldensDir, name));
    } catch (e) {
      if (!(e instanceof GoldenError)) throw e;
      await keepTraces(outDir, name, args.repeat, null);
      return { name, kind: "input", detail: e.message };
    }
    comparison = { ...compareScenario(name, run, golden, tolerances), ...(args.repeat > 1 ? { repeat: { runs: args.repeat, differing: null } } : {}) };
  }
  await keepTraces(outDir, name, args.repeat, isFailing(comparison) ? comparison : null);
  return comparison;
}

/** Keeps the traces of a failing scenario (run 1's, and a flaky scenario's differing run's); removes the rest. */
async function keepTraces(outDir: string, name: string, runs: number, failing: ScenarioComparison | null): Promise<void> {
  for (let k = 1; k <= runs; k++) {
    const keep = failing !== null && (k === 1 || k === failing.repeat?.differing);
    if (!keep) await rm(traceFile(outDir, name, k), { force: true });
  }
}

/**
 * `main`, with an error it did not expect (a report that cannot be written after all, a bug) named and exit 2: the
 * status of bad input, not 1, which CI reads as a regression.
 */
export async function command(argv: string[]): Promise<number> {
  try {
    // Standard output closed by its reader (`| head`) ends the printing only; one that fails is a broken job (2).
    return await withGuardedStdout(() => main(argv));
  } catch (e) {
    const system = typeof (e as NodeJS.ErrnoException).code === "string";
    process.stderr.write(`error: ${system || !(e instanceof Error) ? String((e as Error).message ?? e) : (e.stack ?? e.message)}\n`);
    return 2;
  }
}

if (isEntryPoint(import.meta.url)) process.exitCode = await command(process.argv.slice(2));
