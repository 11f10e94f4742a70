/**
 * `npm run rollout -- <scenario.json> [--out <result.json>]`: runs one scenario headless in Node and writes the
 * result JSON (to stdout without --out). Exit status 1 on a bad scenario or a failed rollout, 2 on bad usage.
 */

import { readFile, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { loadNodeModelPolicy } from "../policy/llm/node.js";
import { runScenario, type LoadedPolicy } from "../scenario/run.js";
import { parseScenarioText, ScenarioError } from "../scenario/schema.js";

const USAGE = "usage: npm run rollout -- <scenario.json> [--out <result.json>]";

function parseArgs(argv: string[]): { scenario: string; out?: string } {
  const positional: string[] = [];
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--out") {
      out = argv[++i];
      if (!out) throw new UsageError("--out needs a file path");
    } else if (arg === "--help" || arg === "-h") {
      throw new UsageError(null);
    } else if (arg.startsWith("-")) {
      throw new UsageError(`unknown option ${arg}`);
    } else positional.push(arg);
  }
  if (positional.length !== 1) throw new UsageError("expected exactly one scenario file");
  return { scenario: positional[0]!, ...(out ? { out } : {}) };
}

class UsageError extends Error {
  constructor(readonly detail: string | null) {
    super(detail ?? USAGE);
  }
}

async function main(): Promise<number> {
  let args: { scenario: string; out?: string };
  try {
    args = parseArgs(process.argv.slice(2));
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
    const result = await runScenario(scenario, {
      loadFile: (file) => readFile(resolve(dirname(path), file), "utf8"),
      modelPolicy: async (spec): Promise<LoadedPolicy> => {
        const policy = await loadNodeModelPolicy({ ...spec, model: resolveLocalModel(spec.model, dirname(path)) });
        return { generation: policy, tokenizer: policy.tokenizer, dispose: () => policy.dispose() };
      },
    });
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

/** A relative model folder is relative to the scenario file, like a replay file. */
function resolveLocalModel(model: string, scenarioDir: string): string {
  return model.startsWith("./") || model.startsWith("../") ? resolve(scenarioDir, model) : model;
}

process.exitCode = await main();
