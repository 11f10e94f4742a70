/**
 * `npm run train:data -- [--out training/data] [--episodes 1200] [--held-out 60] [--samples-per-seed 10]
 * [--error-rate 0.2] [--seed 0] [--scale plan=N,…] [--learner <model> [--learner-rate 0.5] [--learner-plans plan,…]]
 * [--vocabulary <vocabulary file>|<weights file>] [--rename-rate 0 [--rename-same-tokens]] [--look-alike-weight 1]
 * [--path-only-write-weight 0] [--content-first-writes] [--not-found-thoughts]`
 *
 * Writes the training data of `builtin:trained` (docs/training.md): per environment of `ENVIRONMENT_PLANS` (the
 * built-in ones and the starter number-guess module), oracle rollouts with seeded mistakes as JSONL episodes
 * (`src/training/episode.ts`): `held_out.jsonl` from the held-out dataset seeds first, then `train.jsonl` from the
 * training seeds without any held-out task, and `data.json`, what was written and from which seeds.
 * `--episodes`/`--held-out` are per environment (training: times the plan's `--scale`) and rounded up to whole
 * dataset seeds. `--learner` (a model: `builtin:trained`, a folder, a trained weights file) writes a share of the training split's turns in
 * the oracle's place, sampled as the lab's default run samples (`src/training/learner-mix.ts`), in every plan or in
 * `--learner-plans` only; the held-out split stays the oracle's alone. `--vocabulary` (`train:vocab`'s file, or a
 * weights file's merges) tokenizes the episodes with byte-pair merges, recorded in `data.json` (the learner must
 * speak the same vocabulary). `--rename-rate R` renames the task's file in that share of the training split's
 * workspace episodes (`src/training/rename.ts`); `--rename-same-tokens` gives a renamed file only a name as many
 * tokens long as the one it replaces (one, with the recipe's merges). `--look-alike-weight N` makes the training split's workspace oracle
 * look up a look-alike of the task's file (a well-formed call answered "No such file") N times as often as each other
 * kind of mistake, at the same error rate; `--path-only-write-weight N` adds a `write_file` call with its path and no
 * `content` (rejected by the schema) before a write, N times as likely as each other kind (0: never, as the lab's oracle);
 * `--content-first-writes` makes both splits' workspace oracle write `write_file`'s `content` before its `path`;
 * `--not-found-thoughts` makes both splits' workspace calls after a look-up answered "No such file" say so in their
 * think block before naming the step (`The read_file call found no such file.`).
 * Exit status 2 on bad usage.
 */

import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, isAbsolute, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { GenerationInterface } from "../core/index.js";
import { STAMP_FILE } from "../policy/builtin-model/build.js";
import { modelFolder, writeTrainedModel } from "../policy/builtin-model/write-folder.js";
import { resolveModelSource } from "../policy/llm/model-source.js";
import { DEFAULT_MODELS_ROOT, loadNodeModelPolicy } from "../policy/llm/node.js";
import { collectEpisodes, type Collected } from "../training/collect.js";
import type { TrainingEpisode } from "../training/episode.js";
import { ENVIRONMENT_PLANS, HELD_OUT_SEED_BASE, type EnvironmentPlan, type Split } from "../training/plan.js";
import { checkoutEnvironmentLookup } from "./checkout-environments.js";
import { folderVocabulary, readVocabulary, vocabularyManifest, vocabularyOf, vocabularyTokenizer, type Vocabulary } from "./training-vocabulary.js";
import { isEntryPoint } from "./entry.js";
import { pendingFile } from "./output-file.js";

const ROOT = resolve(import.meta.dirname, "../..");
export const TRAINING_DATA_DIR = join(ROOT, "training", "data");

const USAGE =
  "usage: npm run train:data -- [--out <dir>] [--episodes N] [--held-out N] [--samples-per-seed N] [--error-rate R] [--seed N] [--scale plan=N,…] " +
  "[--learner <model> [--learner-rate R] [--learner-plans plan,…]] [--vocabulary <file>] [--rename-rate R [--rename-same-tokens]] [--look-alike-weight N] [--path-only-write-weight N] [--content-first-writes] [--not-found-thoughts]";

/** How the learner samples its turns: as the lab's default run samples (the states a user's run reaches). */
export const LEARNER_SAMPLING = { temperature: 1, top_p: 0.95 } as const;

export interface TrainDataOptions {
  out: string;
  episodes: number;
  heldOut: number;
  samplesPerSeed: number;
  errorRate: number;
  seed: number;
  /**
   * Plans whose training split has this many times `episodes` (`--scale calculator=4`): a plan whose episodes teach
   * few tokens each behind one long shared prompt, whose batches are cheap.
   */
  scales?: Readonly<Record<string, number>>;
  /** A model that writes `rate` of the training split's turns in the oracle's place (`learner-mix.ts`). */
  learner?: { model: string; rate: number; plans?: readonly string[] };
  /** A vocabulary file or weights file whose byte-pair merges tokenize the episodes (`training-vocabulary.ts`). */
  vocabulary?: string;
  /** The share of training episodes whose task file is renamed, in plans with `renames` (`rename.ts`); 0: none. */
  renameRate?: number;
  /** A renamed file gets only a name as many tokens long as the one it replaces (`rename.ts`, `sameTokenCount`). */
  renameSameTokens?: boolean;
  /** The training split's workspace oracle makes its look-alike mistake this many times as often as each other kind (1: as the lab's oracle). */
  lookAlikeWeight?: number;
  /** The training split's workspace oracle writes a path-only `write_file` this many times as often as each other mistake before a write (0: never). */
  pathOnlyWriteWeight?: number;
  /** Both splits' workspace oracle writes `write_file`'s content before its path (false: path first, as the lab's oracle). */
  contentFirstWrites?: boolean;
  /** Both splits' workspace calls after a look-up that found no such file say so in their think block first (false: as the committed weights' data). */
  notFoundThoughts?: boolean;
}

/** `--path-only-write-weight`: a whole number ≥ 0; throws a RangeError naming the option. */
export function parsePathOnlyWriteWeight(text: string | undefined, option = "--path-only-write-weight"): number {
  const weight = Number(text ?? "0");
  if (!Number.isInteger(weight) || weight < 0 || text?.trim() === "") throw new RangeError(`${option}: expected a whole number ≥ 0, got ${text}`);
  return weight;
}

/** `--look-alike-weight`: a whole number ≥ 1; throws a RangeError naming the option. */
export function parseLookAlikeWeight(text: string | undefined, option = "--look-alike-weight"): number {
  const weight = Number(text ?? "1");
  if (!Number.isInteger(weight) || weight < 1 || text?.trim() === "") throw new RangeError(`${option}: expected a whole number ≥ 1, got ${text}`);
  return weight;
}

/** `--rename-rate`: a share in [0, 1]; throws a RangeError naming the option. */
export function parseRenameRate(text: string | undefined): number {
  const rate = Number(text ?? "0");
  if (!(rate >= 0 && rate <= 1) || text?.trim() === "") throw new RangeError(`--rename-rate: expected a number in [0, 1], got ${text}`);
  return rate;
}

const planNames = () => ENVIRONMENT_PLANS.map((p) => p.name).join(", ");

/** `--learner-plans sliding_puzzle,number_guess` as known plan names (none: every plan). */
export function parsePlanList(option: string, text: string): string[] {
  const names = text.split(",").map((p) => p.trim()).filter(Boolean);
  if (names.length === 0) throw new RangeError(`${option}: expected plan names, got '${text}' (plans: ${planNames()})`);
  for (const name of names) {
    if (!ENVIRONMENT_PLANS.some((p) => p.name === name)) throw new RangeError(`${option}: unknown plan '${name}' (plans: ${planNames()})`);
  }
  return names;
}

/** `--scale calculator=4,workspace=2` as plan names and whole multiples of `--episodes`. */
export function parseScales(text: string | undefined): Record<string, number> {
  const scales: Record<string, number> = {};
  for (const part of (text ?? "").split(",").map((p) => p.trim()).filter(Boolean)) {
    const [name, value] = part.split("=");
    if (!ENVIRONMENT_PLANS.some((p) => p.name === name)) {
      throw new RangeError(`--scale: unknown plan '${name}' (plans: ${planNames()})`);
    }
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`--scale: ${name}: expected a whole multiple ≥ 1, got '${value ?? ""}'`);
    scales[name!] = n;
  }
  return scales;
}

/** `--learner`, `--learner-rate`, `--learner-plans` as train:data takes them; throws a RangeError naming the option. */
export function learnerOption(values: { learner?: string; "learner-rate"?: string; "learner-plans"?: string }): TrainDataOptions["learner"] {
  if (values.learner === undefined) {
    const stray = (["learner-rate", "learner-plans"] as const).find((o) => values[o] !== undefined);
    if (stray) throw new RangeError(`--${stray}: needs --learner <model>`);
    return undefined;
  }
  const rate = Number(values["learner-rate"] ?? "0.5");
  if (!(rate > 0 && rate <= 1)) throw new RangeError(`--learner-rate: expected a number in (0, 1], got ${values["learner-rate"]}`);
  const plans = values["learner-plans"] === undefined ? undefined : parsePlanList("--learner-plans", values["learner-plans"]);
  return { model: values.learner, rate, ...(plans ? { plans } : {}) };
}

export function parseOptions(argv: string[]): TrainDataOptions | string {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        out: { type: "string", default: TRAINING_DATA_DIR },
        episodes: { type: "string", default: "1200" },
        "held-out": { type: "string", default: "60" },
        "samples-per-seed": { type: "string", default: "10" },
        "error-rate": { type: "string", default: "0.2" },
        seed: { type: "string", default: "0" },
        scale: { type: "string" },
        learner: { type: "string" },
        "learner-rate": { type: "string" },
        "learner-plans": { type: "string" },
        vocabulary: { type: "string" },
        "rename-rate": { type: "string", default: "0" },
        "rename-same-tokens": { type: "boolean", default: false },
        "look-alike-weight": { type: "string", default: "1" },
        "path-only-write-weight": { type: "string", default: "0" },
        "content-first-writes": { type: "boolean", default: false },
        "not-found-thoughts": { type: "boolean", default: false },
      },
    }));
  } catch (error) {
    return (error as Error).message;
  }
  const count = (name: string, text: string, min: number) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new RangeError(`--${name}: expected an integer ≥ ${min}, got ${text}`);
    return n;
  };
  try {
    const errorRate = Number(values["error-rate"]);
    if (!(errorRate >= 0 && errorRate <= 1)) return `--error-rate: expected a number in [0, 1], got ${values["error-rate"]}`;
    const learner = learnerOption(values);
    const renameRate = parseRenameRate(values["rename-rate"]);
    const lookAlikeWeight = parseLookAlikeWeight(values["look-alike-weight"]);
    const pathOnlyWriteWeight = parsePathOnlyWriteWeight(values["path-only-write-weight"]);
    return {
      out: resolve(values.out),
      episodes: count("episodes", values.episodes, 1),
      heldOut: count("held-out", values["held-out"], 0),
      samplesPerSeed: count("samples-per-seed", values["samples-per-seed"], 1),
      errorRate,
      seed: count("seed", values.seed, 0),
      scales: parseScales(values.scale),
      ...(learner ? { learner } : {}),
      ...(values.vocabulary !== undefined ? { vocabulary: resolve(values.vocabulary) } : {}),
      ...(renameRate > 0 ? { renameRate } : {}),
      ...(values["rename-same-tokens"] ? { renameSameTokens: true } : {}),
      ...(lookAlikeWeight > 1 ? { lookAlikeWeight } : {}),
      ...(pathOnlyWriteWeight > 0 ? { pathOnlyWriteWeight } : {}),
      ...(values["content-first-writes"] ? { contentFirstWrites: true } : {}),
      ...(values["not-found-thoughts"] ? { notFoundThoughts: true } : {}),
    };
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Which weights the learner had, from the build stamp of the folder it was loaded from (a trained file's name and
 * SHA-256, or a random preset's seed): `builtin:trained` names whatever weights were committed when the data was made.
 * Null for a hub model (its id is all there is) or a folder without a stamp.
 */
export function learnerWeights(model: string, modelsRoot = DEFAULT_MODELS_ROOT): Record<string, unknown> | null {
  const source = resolveModelSource(model);
  if (source.kind === "hub") return null;
  const stamp = join(source.kind === "builtin" ? modelFolder(modelsRoot, source.id) : resolve(source.path), STAMP_FILE);
  if (!existsSync(stamp)) return null;
  const read = JSON.parse(readFileSync(stamp, "utf8")) as { preset?: string; seed?: number; weights?: Record<string, unknown> };
  return read.weights ?? { preset: read.preset, seed: read.seed };
}

/**
 * How a summary names a file or folder: relative to the project when inside it, else by its own name (the summary is
 * committed; another machine's absolute paths name nothing there, and the SHA-256 beside the name says which file it
 * was). Anything that is not a path on this machine (`builtin:trained`, a hub id) is kept as given.
 */
export function portableName(model: string, root = ROOT): string {
  if (!existsSync(model)) return model;
  const inside = relative(root, resolve(model));
  return inside.startsWith("..") || isAbsolute(inside) ? basename(resolve(model)) : inside;
}

/**
 * The learner's turns land in the episodes as its own token ids, so it must speak the data's vocabulary: a model
 * folder this project built says which in its tokenizer.json. Throws a RangeError naming both.
 */
function checkLearnerVocabulary(learnerModel: string, vocabulary: Vocabulary, modelsRoot = DEFAULT_MODELS_ROOT): void {
  const source = resolveModelSource(learnerModel);
  if (source.kind === "hub") return;
  const folder = source.kind === "builtin" ? modelFolder(modelsRoot, source.id) : resolve(source.path);
  const own = folderVocabulary(folder);
  if (own && own.sha256 !== vocabulary.sha256) {
    const name = (v: Vocabulary) => (v.merges.length ? `${v.merges.length} merges (${v.sha256.slice(0, 12)}…)` : "the byte-level vocabulary");
    throw new RangeError(`--learner ${learnerModel}: it speaks ${name(own)}, the data ${name(vocabulary)} (--vocabulary): its turns' ids would mean other text`);
  }
}

/** A learner given as a trained weights file (an earlier `weights.safetensors`), not a model folder or id. */
const isWeightsFile = (model: string) => model.endsWith(".safetensors");

/** The episodes as JSON lines, in a file beside `path` that takes its place only once whole (./output-file.ts). */
async function writeJsonl(path: string, episodes: Iterable<TrainingEpisode>): Promise<void> {
  const file = pendingFile(path);
  try {
    for (const e of episodes) if (!file.stream.write(`${JSON.stringify(e)}\n`)) await once(file.stream, "drain");
    await file.commit();
  } catch (error) {
    await file.abandon();
    throw error;
  }
}

const summary = (c: Collected) => ({
  episodes: c.episodes.length,
  tokens: c.episodes.reduce((n, e) => n + e.ids.length, 0),
  learned_tokens: c.episodes.reduce((n, e) => n + e.mask.split("1").length - 1, 0),
  mistakes: c.episodes.reduce((n, e) => n + e.mistakes.length, 0),
  learner_turns: c.episodes.reduce((n, e) => n + (e.learner_turns?.length ?? 0), 0),
  learner_slips: c.episodes.reduce((n, e) => n + (e.learner_slips?.length ?? 0), 0),
  solved: c.episodes.filter((e) => e.total_reward > 0).length,
  excluded_as_held_out: c.excluded,
  held_out_tasks_kept: c.heldOutTasksKept,
  renamed: c.renamed,
  failed: c.failed,
});

export async function writeTrainingData(options: TrainDataOptions, log: (line: string) => void = console.log): Promise<void> {
  mkdirSync(options.out, { recursive: true });
  const environments = await checkoutEnvironmentLookup();
  const seedsFor = (n: number) => Math.ceil(n / options.samplesPerSeed);
  const trainSeeds = (plan: EnvironmentPlan) => seedsFor(options.episodes * (options.scales?.[plan.name] ?? 1));
  const collected: Record<Split, Map<EnvironmentPlan, Collected>> = { held_out: new Map(), train: new Map() };
  const started = performance.now();
  const vocabulary = options.vocabulary ? readVocabulary(options.vocabulary) : vocabularyOf([]);
  const tokenizer = await vocabularyTokenizer(vocabulary);
  // A weights file is built into a model folder of its own first (builtin:trained's architecture, the file's weights).
  const built = options.learner && isWeightsFile(options.learner.model) ? mkdtempSync(join(tmpdir(), "learner-")) : null;
  const learnerModel = built ? writeTrainedModel(built, resolve(options.learner!.model), true).dir : options.learner?.model;
  const model = learnerModel ? await loadNodeModelPolicy({ model: learnerModel, ...LEARNER_SAMPLING, seed: options.seed }) : null;
  // Read once it is loaded (a built-in folder is rebuilt on load), and before a weights file's folder is removed.
  const weights = learnerModel ? learnerWeights(learnerModel) : null;
  if (learnerModel) {
    try {
      checkLearnerVocabulary(learnerModel, vocabulary);
    } catch (error) {
      await model?.dispose();
      if (built) rmSync(built, { recursive: true, force: true });
      throw error;
    }
  }
  // Sampled whatever the scenario asks (the oracle's runs are greedy-agnostic).
  const learner: GenerationInterface | null = model && {
    generate: (data, _greedy, generateOptions) => model.generate(data, false, generateOptions),
    releaseSamples: (ids) => model.releaseSamples(ids),
  };
  try {
    for (const plan of ENVIRONMENT_PLANS) {
      const learnerHere = learner !== null && (options.learner!.plans?.includes(plan.name) ?? true);
      const common = {
        samplesPerSeed: options.samplesPerSeed,
        errorRate: options.errorRate,
        oracleSeed: options.seed,
        environments,
        tokenizer,
        ...(options.contentFirstWrites ? { contentFirstWrites: true } : {}),
        ...(options.notFoundThoughts ? { notFoundThoughts: true } : {}),
      };
      const heldOut = await collectEpisodes(plan, { ...common, split: "held_out", seeds: seedsFor(options.heldOut) });
      const train = await collectEpisodes(plan, {
        ...common,
        split: "train",
        seeds: trainSeeds(plan),
        excludeTasks: heldOut.tasks,
        ...(options.renameRate ? { renameRate: options.renameRate } : {}),
        ...(options.renameSameTokens ? { renameSameTokens: true } : {}),
        ...(options.lookAlikeWeight ? { lookAlikeWeight: options.lookAlikeWeight } : {}),
        ...(options.pathOnlyWriteWeight ? { pathOnlyWriteWeight: options.pathOnlyWriteWeight } : {}),
        ...(learnerHere ? { learner: { generation: learner, rate: options.learner!.rate } } : {}),
      });
      collected.held_out.set(plan, heldOut);
      collected.train.set(plan, train);
      const learnerNote = (learnerHere ? `, ${summary(train).learner_turns} turns by the learner (${summary(train).learner_slips} malformed)` : "") + (train.renamed ? `, ${train.renamed} with the task's file renamed` : "");
      log(`${plan.name}: ${train.episodes.length} training episodes (${train.excluded} dropped as held-out tasks, ${train.heldOutTasksKept} kept with a held-out task${learnerNote}), ${heldOut.episodes.length} held out`);
    }
  } finally {
    await model?.dispose();
    if (built) rmSync(built, { recursive: true, force: true });
  }
  // Whole files only: a run stopped while it writes leaves each file as it was (data.json, written last, still
  // describes the earlier data only if it is stopped between the renames, a moment).
  for (const split of ["train", "held_out"] as const) {
    await writeJsonl(join(options.out, `${split}.jsonl`), [...collected[split].values()].flatMap((c) => c.episodes));
  }
  const manifest = {
    format: "rollout-lab-training-data/3",
    seed: options.seed,
    error_rate: options.errorRate,
    rename_rate: options.renameRate ?? 0,
    rename_same_tokens: options.renameSameTokens ?? false,
    look_alike_weight: options.lookAlikeWeight ?? 1,
    path_only_write_weight: options.pathOnlyWriteWeight ?? 0,
    content_first_writes: options.contentFirstWrites ?? false,
    not_found_thoughts: options.notFoundThoughts ?? false,
    ...(options.learner
      ? { learner: { ...options.learner, model: portableName(options.learner.model), weights, sampling: { ...LEARNER_SAMPLING, seed: options.seed } } }
      : {}),
    ...(vocabulary.merges.length > 0 ? { vocabulary: { file: portableName(options.vocabulary!), ...vocabularyManifest(vocabulary) } } : {}),
    samples_per_seed: options.samplesPerSeed,
    train_dataset_seeds: `0…${Math.max(...ENVIRONMENT_PLANS.map(trainSeeds)) - 1}`,
    held_out_dataset_seeds: options.heldOut ? `${HELD_OUT_SEED_BASE}…${HELD_OUT_SEED_BASE + seedsFor(options.heldOut) - 1}` : "none",
    environments: ENVIRONMENT_PLANS.map((plan) => ({
      ...plan,
      training_scale: options.scales?.[plan.name] ?? 1,
      train_dataset_seeds: `0…${trainSeeds(plan) - 1}`,
      train: summary(collected.train.get(plan)!),
      held_out: summary(collected.held_out.get(plan)!),
    })),
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
  const manifestFile = pendingFile(join(options.out, "data.json"));
  manifestFile.stream.write(`${JSON.stringify(manifest, null, 2)}\n`);
  await manifestFile.commit();
  log(`wrote ${join(options.out, "train.jsonl")}, held_out.jsonl and data.json in ${manifest.seconds} s`);
}

export async function main(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  if (typeof options === "string") {
    console.error(`${options}\n${USAGE}`);
    return 2;
  }
  try {
    await writeTrainingData(options);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    console.error(`${error.message}\n${USAGE}`);
    return 2;
  }
  return 0;
}

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
