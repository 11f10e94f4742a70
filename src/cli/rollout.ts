/**
 * `rollout-lab rollout <scenario.json> [--out <result.json>] [--environments <dir>]` (`npm run rollout -- …` in
 * the checkout): runs one scenario headless in Node and writes the result JSON (to stdout without --out). Exit
 * status 1 on a bad scenario or a failed rollout, 2 on bad usage.
 */

import { readFile, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { runScenario } from "../scenario/run.js";
import { useEnvironmentsDir } from "./checkout-environments.js";
import { isEntryPoint } from "./entry.js";
import { nodeRunOptions, UsageError } from "./node-run.js";
import { parseScenarioText, ScenarioError } from "../scenario/schema.js";

const USAGE = "usage: rollout-lab rollout <scenario.json> [--out <result.json>] [--environments <dir>]";

function parseArgs(argv: string[]): { scenario: string; out?: string } {
  const positional: string[] = [];
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--out") {
      out = argv[++i];
      if (!out) throw new UsageError("--out needs a file path", USAGE);
    } else if (arg === "--environments") {
      const dir = argv[++i];
      if (!dir) throw new UsageError("--environments needs a folder", USAGE);
      try {
        useEnvironmentsDir(dir);
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
  return { scenario: positional[0]!, ...(out ? { out } : {}) };
}


export async function main(argv: string[]): Promise<number> {
  let args: { scenario: string; out?: string };
  try {
    args = parseArgs(argv);
  } catch (e) {
    const detail = (e as UsageError).detail;
    process.stderr.write(`${detail ? `error: ${detail}\n` : ""}${USAGE}\n`);
    return detail ? 2 : 0;
  }
  const path = resolve(args.scenario);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    process.stderr.write(`error: cannot read scenario ${args.scenario}: ${(e as Error).message}\n`);
    return 1;
  }
  try {
    const scenario = parseScenarioText(text, args.scenario);
    const result = await runScenario(scenario, await nodeRunOptions(path));
    const json = `${JSON.stringify(result, null, 2)}\n`;
    if (args.out) await writeFile(args.out, json);
    else process.stdout.write(json);
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

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
