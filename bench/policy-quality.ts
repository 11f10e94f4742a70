/**
 * `npm run bench:policy-quality`: the quality of a model policy (default `builtin:trained`) against the oracle and a
 * uniformly random well-formed action, on the same held-out samples of every environment plan, in one run
 * (src/bench-support/policy-quality.ts). Prints a table per plan × policy and the target flags (reported, not
 * asserted), and writes `bench/results/policy-quality.json` with the machine, the model's id and where its weights
 * came from.
 *
 * Options: `-- --model <id>` (`builtin:tiny` to try it without trained weights; `none` for the baselines alone),
 * `--samples N` per plan (default 40: 4 held-out seeds × 10; the workspace 400, `DEFAULT_PLAN_SAMPLES`: a given
 * `--samples` counts for every plan), `--per-seed K`, `--plans a,b`, `--random-seed S`,
 * `--max-new-tokens T` (the model's, every plan), `--out <file>`, `--transcripts <dir>`; `--temperature T`, `--top-p P`,
 * `--top-k K`, `--sampling-seed S` (how `model_sampled` samples; the lab's default run's settings by default, so other
 * values measure what a change of the default would do) and `--policies model,model_sampled,oracle,random` (a subset).
 */

import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { DEFAULT_PLAN_SAMPLES, formatPolicyQuality, LAB_SAMPLING, POLICIES, runPolicyQuality, samplesOf, type PolicyName, type Sampling } from "../src/bench-support/policy-quality.js";
import { nodeRunOptions } from "../src/cli/node-run.js";
import { writeResult } from "../src/cli/rollout.js";
import { parseSampling, ScenarioError } from "../src/scenario/schema.js";
import { STAMP_FILE } from "../src/policy/builtin-model/build.js";
import { TRAINED_SUMMARY_FILE, TRAINED_WEIGHTS_FILE } from "../src/policy/builtin-model/write-folder.js";
import { DEFAULT_MODELS_ROOT } from "../src/policy/llm/node.js";
import { TRAINING_SOLVERS } from "../src/training/collect.js";
import { ENVIRONMENT_PLANS, planScenario, splitSeeds } from "../src/training/plan.js";
import { machine } from "./machine.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const USAGE =
  "usage: npm run bench:policy-quality -- [--model builtin:trained|builtin:tiny|<folder>|none] [--samples 40] [--per-seed 10]\n" +
  "       [--plans sliding_puzzle,calculator,…] [--random-seed 0] [--max-new-tokens T] [--out bench/results/policy-quality.json]\n" +
  "       [--transcripts <dir>]   (each policy's rollout result per plan, <dir>/<plan>.<policy>.json, to read the transcripts)\n" +
  "       [--temperature 1] [--top-p 0.95] [--top-k 0] [--sampling-seed 0]   (model_sampled's; default: the lab's default run's)\n" +
  "       [--policies model,model_sampled,oracle,random]";

function fail(message: string): never {
  console.error(`bench:policy-quality: ${message}\n${USAGE}`);
  process.exit(2);
}

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) fail(`--${name}: expected a positive integer, got '${text}'`);
  return n;
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      model: { type: "string", default: "builtin:trained" },
      samples: { type: "string" },
      "per-seed": { type: "string" },
      plans: { type: "string" },
      "random-seed": { type: "string" },
      "max-new-tokens": { type: "string" },
      out: { type: "string", default: join(root, "bench/results/policy-quality.json") },
      transcripts: { type: "string" },
      temperature: { type: "string" },
      "top-p": { type: "string" },
      "top-k": { type: "string" },
      "sampling-seed": { type: "string" },
      policies: { type: "string" },
      help: { type: "boolean" },
    },
  }));
} catch (e) {
  fail((e as Error).message);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const model = values.model === "none" ? null : values.model;
const samples = positive("samples", values.samples, 40);
const samplesPerSeed = positive("per-seed", values["per-seed"], 10);
const randomSeed = values["random-seed"] === undefined ? 0 : Number(values["random-seed"]);
if (!Number.isInteger(randomSeed)) fail(`--random-seed: expected an integer, got '${values["random-seed"]}'`);
const maxNewTokens = values["max-new-tokens"] === undefined ? undefined : positive("max-new-tokens", values["max-new-tokens"], 1);
const names = values.plans?.split(",").map((s) => s.trim()).filter(Boolean);
const unknown = names?.filter((n) => !ENVIRONMENT_PLANS.some((p) => p.name === n)) ?? [];
if (unknown.length) fail(`--plans: unknown plan '${unknown[0]}' (plans: ${ENVIRONMENT_PLANS.map((p) => p.name).join(", ")})`);
const plans = names ? ENVIRONMENT_PLANS.filter((p) => names.includes(p.name)) : ENVIRONMENT_PLANS;

/** model_sampled's settings: the lab's default run's, with those given, each checked by the scenario schema's rules. */
function samplingOptions(given: Record<"temperature" | "top-k" | "top-p" | "sampling-seed", string | undefined>): Sampling {
  const field = { temperature: "temperature", "top-k": "top_k", "top-p": "top_p", "sampling-seed": "seed" } as const;
  const merged: Sampling = { ...LAB_SAMPLING };
  for (const [option, text] of Object.entries(given) as [keyof typeof field, string | undefined][]) {
    if (text === undefined) continue;
    const value = text.trim() === "" ? text : Number(text);
    try {
      merged[field[option]] = parseSampling({ [field[option]]: value }, "sampling")[field[option]]!;
    } catch (e) {
      // The schema names the field (`sampling.top_p: expected …`); the user typed the option.
      const problems = e instanceof ScenarioError ? e.problems : [(e as Error).message];
      fail(`--${option}: ${problems.map((p) => p.slice(p.indexOf(": ") + 2)).join("; ")}`);
    }
  }
  // Temperature 0 is greedy decoding, which `model` already runs.
  if (merged.temperature === 0) fail("--temperature: 0 is greedy decoding (the model policy); give a temperature > 0");
  return merged;
}
const sampling = samplingOptions({ temperature: values.temperature, "top-k": values["top-k"], "top-p": values["top-p"], "sampling-seed": values["sampling-seed"] });
const policies = values.policies?.split(",").map((s) => s.trim()).filter(Boolean);
const unknownPolicy = policies?.find((p) => !(POLICIES as readonly string[]).includes(p));
if (unknownPolicy !== undefined) fail(`--policies: unknown policy '${unknownPolicy}' (policies: ${POLICIES.join(", ")})`);
if (policies?.length === 0) fail("--policies: name at least one policy");

// Before the baselines' minutes: builtin:trained needs its committed weights file.
if (model === "builtin:trained" && !existsSync(TRAINED_WEIGHTS_FILE)) {
  console.error(
    `bench:policy-quality: builtin:trained has no weights yet: ${relative(root, TRAINED_WEIGHTS_FILE)} is missing ` +
      "(npm run train:model writes it; docs/training.md). Try --model builtin:tiny to run the benchmark on random weights.",
  );
  process.exit(1);
}

/** The model's folder (built-in: under public/models; else the folder named), if there is one on disk. */
function modelFolder(id: string): string | null {
  const dir = id.startsWith("builtin:") ? join(DEFAULT_MODELS_ROOT, "builtin", id.slice("builtin:".length)) : resolve(id);
  return existsSync(dir) && statSync(dir).isDirectory() ? dir : null;
}

/** Where the model's weights came from: the builder's stamp (preset, weights file and its SHA-256) and the training summary. */
function provenance(id: string): Record<string, unknown> {
  const dir = modelFolder(id);
  if (dir === null) return { note: "no local model folder (a hub model): its id is its provenance" };
  const out: Record<string, unknown> = { folder: relative(root, dir) || dir };
  const stampPath = join(dir, STAMP_FILE);
  if (existsSync(stampPath)) {
    const stamp = JSON.parse(readFileSync(stampPath, "utf8")) as Record<string, unknown>;
    out.builder = { version: stamp.version, preset: stamp.preset, ...(stamp.seed !== undefined ? { seed: stamp.seed } : {}) };
    out.weights = stamp.weights ?? "seeded random weights (a built-in preset)";
  }
  const summary = TRAINED_SUMMARY_FILE;
  if (id === "builtin:trained" && existsSync(summary)) {
    out.training_summary_file = relative(root, summary);
    try {
      out.training_summary = JSON.parse(readFileSync(summary, "utf8"));
    } catch (e) {
      out.training_summary = `unreadable: ${(e as Error).message}`;
    }
  }
  return out;
}

/** Writes each policy's rollout result of a plan to `<dir>/<plan>.<policy>.json`, as `npm run rollout --out` writes one. */
function writeTranscript(dir: string) {
  mkdirSync(dir, { recursive: true });
  return (plan: string, policy: string, result: unknown) => writeResult(result, join(dir, `${plan}.${policy}.json`));
}

const run = await nodeRunOptions(join(process.cwd(), "policy-quality.scenario.json"));
// A given --samples is every plan's; else the plans with more samples by default keep them.
const planSamples = values.samples === undefined ? DEFAULT_PLAN_SAMPLES : {};
const counts = plans.map((p) => `${p.name} ${samplesOf(p, { samples, planSamples })}`).join(", ");
console.error(`policy quality: ${model ?? "(no model)"} against the oracle and random well-formed actions, held-out samples: ${counts}`);
const started = performance.now();
let result;
try {
  result = await runPolicyQuality({
    plans,
    scenarioFor: (plan, seed, size) => planScenario(plan, seed, size, { seed: 0, errorRate: 0 }),
    heldOutSeeds: (count) => splitSeeds("held_out", count),
    samples,
    samplesPerSeed,
    planSamples,
    model,
    modelPolicy: run.modelPolicy,
    oracleSolvers: TRAINING_SOLVERS,
    randomSeed,
    environments: run.environments!,
    ...(maxNewTokens !== undefined ? { modelMaxNewTokens: maxNewTokens } : {}),
    sampling,
    ...(policies ? { policies: policies as PolicyName[] } : {}),
    log: (line) => console.error(line),
    ...(values.transcripts !== undefined ? { onResult: writeTranscript(values.transcripts) } : {}),
  });
} catch (e) {
  console.error(`bench:policy-quality: ${(e as Error).message}`);
  process.exit(1);
}

console.log(formatPolicyQuality(result));
const file = resolve(values.out);
mkdirSync(dirname(file), { recursive: true });
const record = {
  measured_at: new Date().toISOString(),
  machine: machine(),
  total_wall_s: Math.round((performance.now() - started) / 100) / 10,
  ...(model !== null ? { model_provenance: provenance(model) } : {}),
  result,
};
writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
console.error(`wrote ${relative(process.cwd(), file) || file}`);
