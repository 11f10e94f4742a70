/**
 * `rollout-lab rollout <scenario.json> [--out <result.json>] [--env-metrics <metrics.json>] [--environments <dir>]`
 * (`npm run rollout -- …` in the checkout): runs one scenario headless in Node and writes the result JSON (to stdout
 * without --out). `--env-metrics` also asks each environment for its `global_post_process_and_metrics` after the run
 * and writes them there (never into the result). Exit status 1 on a bad scenario or a failed rollout, 2 on bad usage.
 *
 * The result is written as it is serialised, a sample at a time (`jsonTextChunks`), never as one string: the text
 * is byte for byte `JSON.stringify(result, null, 2)` and a newline, as before, but a run too big for one string
 * (30,000 calculator samples are ~700 million characters; V8 stops at 2^29 − 24) is written whole. A dataset too big
 * for the heap is refused before it is generated (`dataset.size: …`, `nodeSampleLimit` in ./node-run.ts). The
 * scenario file is read as bytes: bytes that are not UTF-8 are an error naming the byte.
 */

import { readFile, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { EnvironmentMetrics } from "../scenario/environment-metrics.js";
import { jsonTextChunks } from "../scenario/result.js";
import { runScenario } from "../scenario/run.js";
import { chooseEnvironmentsDir } from "./checkout-environments.js";
import { isEntryPoint } from "./entry.js";
import { nodeRunOptions, UsageError } from "./node-run.js";
import { pendingFile } from "./output-file.js";
import { parseScenarioText, ScenarioError } from "../scenario/schema.js";

const USAGE = "usage: rollout-lab rollout <scenario.json> [--out <result.json>] [--env-metrics <metrics.json>] [--environments <dir>]";

interface Args {
  scenario: string;
  out?: string;
  envMetrics?: string;
}

function parseArgs(argv: string[]): Args {
  const positional: string[] = [];
  let out: string | undefined;
  let envMetrics: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--out") {
      out = argv[++i];
      if (!out) throw new UsageError("--out needs a file path", USAGE);
    } else if (arg === "--env-metrics") {
      envMetrics = argv[++i];
      if (!envMetrics) throw new UsageError("--env-metrics needs a file path", USAGE);
    } else if (arg === "--environments") {
      const dir = argv[++i];
      if (!dir) throw new UsageError("--environments needs a folder", USAGE);
      try {
        chooseEnvironmentsDir(dir);
      } catch (e) {
        throw new UsageError((e as Error).message, USAGE);
      }
    } else if (arg === "--help" || arg === "-h") {
      throw new UsageError(null, USAGE);
    } else if (arg.startsWith("-")) {
      throw new UsageError(`unknown option ${arg}`, USAGE);
    } else positional.push(arg);
  }
  if (positional.length !== 1) throw new UsageError("expected exactly one scenario file", USAGE);
  return { scenario: positional[0]!, ...(out ? { out } : {}), ...(envMetrics ? { envMetrics } : {}) };
}


export async function main(argv: string[]): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (e) {
    const detail = (e as UsageError).detail;
    process.stderr.write(`${detail ? `error: ${detail}\n` : ""}${USAGE}\n`);
    return detail ? 2 : 0;
  }
  const path = resolve(args.scenario);
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (e) {
    process.stderr.write(`error: cannot read scenario ${args.scenario}: ${(e as Error).message}\n`);
    return 1;
  }
  try {
    const scenario = parseScenarioText(bytes, args.scenario);
    const asked: { reports: EnvironmentMetrics[] } = { reports: [] };
    const onEnvironmentMetrics = (reports: EnvironmentMetrics[]) => void (asked.reports = reports);
    const result = await runScenario(scenario, { ...(await nodeRunOptions(path)), ...(args.envMetrics ? { onEnvironmentMetrics } : {}) });
    try {
      await writeResult(result, args.out);
    } catch (e) {
      process.stderr.write(`error: cannot write the result${args.out ? ` to ${args.out}` : ""}: ${(e as Error).message}\n`);
      return 1;
    }
    if (args.envMetrics) {
      const written = asked.reports;
      // An environment's failure is its own: the run and the other metrics are kept, and it is said here too.
      for (const r of written) if ("error" in r) process.stderr.write(`warning: global_post_process_and_metrics of '${r.task}' failed: ${r.error}\n`);
      try {
        await writeFile(args.envMetrics, `${JSON.stringify({ environment_metrics: written }, null, 2)}\n`);
      } catch (e) {
        process.stderr.write(`error: cannot write the environment metrics to ${args.envMetrics}: ${(e as Error).message}\n`);
        return 1;
      }
    }
    return 0;
  } catch (e) {
    if (e instanceof ScenarioError) {
      process.stderr.write(`error: invalid scenario ${args.scenario}:\n${e.problems.map((p) => `  ${p}`).join("\n")}\n`);
    } else {
      process.stderr.write(`error: rollout failed: ${(e as Error).message}\n`);
    }
    return 1;
  }
}

/** How much text is gathered before one write (the pieces are small; a write per piece would cost more). */
const WRITE_BYTES = 1 << 20;

/**
 * Writes `JSON.stringify(result, null, 2)` + "\n" to `out` (a file, in place only once whole) or stdout, a piece at a
 * time, minding backpressure.
 */
export async function writeResult(result: unknown, out?: string): Promise<void> {
  const file = out ? pendingFile(out) : null;
  const sink = file ? file.stream : process.stdout;
  let failed: Error | null = null;
  const onError = (e: Error) => (failed ??= e);
  sink.on("error", onError);
  const write = async (text: string) => {
    if (failed) throw failed;
    if (sink.write(text)) return;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        sink.off("error", fail);
        resolve();
      };
      const fail = (e: Error) => {
        sink.off("drain", done);
        reject(e);
      };
      sink.once("drain", done);
      sink.once("error", fail);
    });
  };
  try {
    let parts: string[] = [];
    let size = 0;
    for (const piece of jsonTextChunks(result)) {
      parts.push(piece);
      size += piece.length;
      if (size >= WRITE_BYTES) {
        await write(parts.join(""));
        parts = [];
        size = 0;
      }
    }
    parts.push("\n");
    await write(parts.join(""));
    if (failed) throw failed;
    await file?.commit();
  } catch (e) {
    await file?.abandon();
    throw e;
  } finally {
    sink.off("error", onError);
  }
}

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
