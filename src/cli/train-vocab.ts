/**
 * `npm run train:vocab -- [--out training/vocabulary.json] [--merges 1024] [--episodes 1200] [--error-rate 0.2]
 * [--seed 0] [--scale plan=N,…]`
 *
 * Learns `builtin:trained`'s byte-pair merges (`src/training/vocabulary.ts`) from the lab's own text: the oracle's
 * rollouts of every environment plan's training split (as `train:data` writes them, without a learner), each
 * distinct message once, so a system prompt repeated in every episode weighs as much as one assistant turn and the
 * merges follow what the turns and observations say. Writes a vocabulary file that `train:data --vocabulary` and
 * `train:model --vocabulary` tokenize with (docs/training.md). Exit status 2 on bad usage.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { byteLevelTokenizer } from "../core/index.js";
import { collectEpisodes } from "../training/collect.js";
import { ENVIRONMENT_PLANS } from "../training/plan.js";
import { learnMerges } from "../training/vocabulary.js";
import { checkoutEnvironmentLookup } from "./checkout-environments.js";
import { isEntryPoint } from "./entry.js";
import { parseScales } from "./train-data.js";

/** The plans' scales of the recipe's vocabulary (train-model's `RECIPE.scale`; a test keeps the two equal). */
export const VOCABULARY_RECIPE_SCALE = "calculator=2,workspace=2";
import { VOCABULARY_FORMAT } from "./training-vocabulary.js";

const ROOT = resolve(import.meta.dirname, "../..");
const USAGE = "usage: npm run train:vocab -- [--out <file>] [--merges N] [--episodes N] [--error-rate R] [--seed N] [--scale plan=N,…]";

/** The distinct messages of the oracle's training rollouts (split at `<|im_start|>`), each once. */
async function oracleMessages(options: { episodes: number; errorRate: number; seed: number; scales: Record<string, number> }): Promise<Set<string>> {
  const environments = await checkoutEnvironmentLookup();
  const messages = new Set<string>();
  for (const plan of ENVIRONMENT_PLANS) {
    const seeds = Math.ceil((options.episodes * (options.scales[plan.name] ?? 1)) / 10);
    const collected = await collectEpisodes(plan, { split: "train", seeds, samplesPerSeed: 10, errorRate: options.errorRate, oracleSeed: options.seed, environments });
    for (const e of collected.episodes) for (const m of byteLevelTokenizer.decode(e.ids).split("<|im_start|>")) if (m) messages.add(m);
  }
  return messages;
}

export interface VocabularyOptions {
  out: string;
  merges: number;
  episodes: number;
  errorRate: number;
  seed: number;
  scales: Record<string, number>;
}

/** Learns the merges and writes the vocabulary file (`train:model` runs this as its first step). */
export async function writeVocabulary(options: VocabularyOptions, log: (line: string) => void = console.log): Promise<void> {
  const started = performance.now();
  const messages = await oracleMessages(options);
  const learned = learnMerges(messages, options.merges);
  const { out, merges, episodes, errorRate, seed, scales } = options;
  const file = {
    format: VOCABULARY_FORMAT,
    learned_from: { messages: messages.size, episodes_per_plan: episodes, scale: scales, error_rate: errorRate, seed, merges_asked: merges },
    merges: learned,
  };
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(file)}\n`);
  log(`${learned.length} merges from ${messages.size} distinct messages in ${((performance.now() - started) / 1000).toFixed(1)} s: ${out}`);
}

export async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        out: { type: "string", default: join(ROOT, "training", "vocabulary.json") },
        merges: { type: "string", default: "1024" },
        episodes: { type: "string", default: "1200" },
        "error-rate": { type: "string", default: "0.2" },
        seed: { type: "string", default: "0" },
        // The recipe's (train-model's RECIPE.scale): the command alone gives builtin:trained's vocabulary.
        scale: { type: "string", default: VOCABULARY_RECIPE_SCALE },
      },
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const merges = Number(values.merges);
  const episodes = Number(values.episodes);
  const errorRate = Number(values["error-rate"]);
  const seed = Number(values.seed);
  const bad =
    (!Number.isInteger(merges) || merges < 1) ? `--merges: expected an integer ≥ 1, got ${values.merges}`
    : (!Number.isInteger(episodes) || episodes < 1) ? `--episodes: expected an integer ≥ 1, got ${values.episodes}`
    : !(errorRate >= 0 && errorRate <= 1) ? `--error-rate: expected a number in [0, 1], got ${values["error-rate"]}`
    : (!Number.isInteger(seed) || seed < 0) ? `--seed: expected an integer ≥ 0, got ${values.seed}`
    : null;
  let scales: Record<string, number>;
  try {
    scales = parseScales(values.scale === "none" ? "" : values.scale);
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (bad) {
    console.error(`${bad}\n${USAGE}`);
    return 2;
  }
  await writeVocabulary({ out: resolve(values.out), merges, episodes, errorRate, seed, scales });
  return 0;
}

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
