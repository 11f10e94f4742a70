/**
 * `npm run train:model -- [--size trained|tiny] [--steps 3000] [--time-limit 4200] [--episodes 1200] [--held-out 60]
 * [--error-rate 0.2] [--seed 0] [--work training/out] [--no-prefix-grad] [--context-loss-weight 0.1]
 * [--attention-budget 3e7] [--scale calculator=2,workspace=2|none] [--learner none|<model>|<weights file> [--learner-rate 0.5]
 * [--learner-plans sliding_puzzle,sliding_puzzle_shuffled,number_guess]] [--second-stage-time-limit 720]
 * [--first-stage <weights file>] [--induction-steps 1144] [--rename-rate 0.5] [--rename-same-tokens] [--merges 1024|--vocabulary <file>] [--device auto|cpu|cuda] [--skip-data] [--resume] [--install]`
 *
 * The whole pipeline of `builtin:trained` (docs/training.md): the training data (`train:data`, into
 * `<work>/data/`; a learner model writes a share of its training turns, as `train:data --learner`), the first stage
 * of training in PyTorch (`python3 -m training.train`, into `<work>/`; it exports `<work>/weights.safetensors`), the
 * second stage from those weights on data of its own (with `--induction-steps N`, 1,144 in the recipe, the first stage starts from a decoder that
 * has first learned to copy by content: `python3 -m training.induction_probe`, N steps, into `<work>/induction.safetensors`), the first stage's weights its learner (`SECOND_STAGE`, into
 * `<work>/stage2/`; `--second-stage-time-limit 0` skips it), and the model folder built from the last stage's file
 * (`<work>/models/builtin/trained/`; with `--install`, `public/models/builtin/trained/`). First of all it learns
 * `--merges N` (0: none) byte-pair merges from the oracle's text into `<work>/vocabulary.json` (`train:vocab`; `--merges 0`:
 * the byte-level vocabulary), or takes `--vocabulary` (such a file, or a weights file's merges; with `--first-stage`,
 * that file's); both stages' data are tokenized with them, the model speaks them (its weights file carries them), and
 * a learner must speak them too.
 * `--install` first copies the file and the run's summary over the committed ones (`TRAINED_WEIGHTS_FILE`,
 * `trained.train.json`), so builtin:trained is this run's model everywhere.
 * Needs Debian's `python3-torch` and `libopenblas0-pthread` (`apt-get install python3-torch libopenblas0-pthread`);
 * says so when `python3` cannot import torch. Exit status 2 on bad usage, 1 when a step fails.
 */

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { TRAINED_SUMMARY_FILE, TRAINED_WEIGHTS_FILE, writeBuiltinFolder, writeTrainedModel } from "../policy/builtin-model/write-folder.js";
import { PUBLIC_MODELS_DIR } from "./build-model.js";
import { isEntryPoint } from "./entry.js";
import { learnerOption, parseLookAlikeWeight, parsePathOnlyWriteWeight, parseRenameRate, parseScales, portableName, writeTrainingData, type TrainDataOptions } from "./train-data.js";
import { writeVocabulary } from "./train-vocab.js";

const ROOT = resolve(import.meta.dirname, "../..");
const PYTHON = process.env.PYTHON ?? "/usr/bin/python3";

const USAGE =
  "usage: npm run train:model -- [--size trained|tiny] [--steps N] [--episodes N] [--held-out N] [--error-rate R] [--seed N] " +
  "[--work <dir>] [--time-limit S] [--no-prefix-grad] [--context-loss-weight W] [--attention-budget N] [--scale plan=N,…|none] " +
  "[--learner <model>|<weights file>|none [--learner-rate R] [--learner-plans plan,…]] [--second-stage-time-limit S] " +
  "[--first-stage <weights file>] [--induction-steps N] [--second-stage-look-alike-weight N] [--merges N|--vocabulary <file>] [--rename-rate R] [--rename-same-tokens] [--copy-weight W] [--path-only-write-weight N] [--content-first-writes] [--not-found-thoughts] [--device auto|cpu|cuda] [--skip-data] [--resume] [--install]";

/**
 * builtin:trained's recipe (docs/training.md, sections 1, 2 and 4), what `npm run train:model` runs unless told
 * otherwise: 1,024 byte-pair merges learned from the oracle's text first (a name, a digit, `"}}` are one token each),
 * twice the calculator's and the workspace's episodes (their batches teach few tokens behind one long prompt; the
 * workspace's calls copy file names), a tenth of the loss on the context after the shared prompt (copying a board, a
 * path or a file from earlier in the context), and no learner in the first stage (no earlier model speaks this
 * vocabulary; the second stage's learner is the first stage's weights, `secondStageLearner`). `--merges 0`,
 * `--scale none`, `--context-loss-weight 0` turn each off; `--learner <model>` gives the first stage one.
 */
export const RECIPE = {
  /** The first stage's steps: 3,000 (~53 minutes here; session 31: the 2,000 before it held the sampled workspace at 95%). */
  steps: "3000",
  merges: "1024",
  scale: "calculator=2,workspace=2",
  contextLossWeight: "0.1",
  attentionBudget: "3e7",
  /** The first stage's learner: none. */
  learner: "none" as string,
  /** The rate and plans of a learner (the second stage's, or one given with `--learner`). */
  learnerRate: "0.5",
  learnerPlans: "sliding_puzzle,sliding_puzzle_shuffled,number_guess",
  /** The share of both stages' workspace episodes whose task file is renamed (`src/training/rename.ts`): half. */
  renameRate: "0.5",
  /** Renamed files get only names as many tokens long as the ones they replace (`train:data --rename-same-tokens`): no, as the committed weights' data. */
  renameSameTokens: false as boolean,
  /** Both stages' weight on the learned tokens only the task's text predicts (`python3 -m training.train --copy-weight`, `copy_targets` in training/data.py): 1, as every other token. */
  copyWeight: "1",
  /** Steps of the induction warm-up before the first stage (`inductionWarmUp`): ~20 minutes here. */
  inductionSteps: "1144",
  /** How much more often than each other mistake both stages' workspace oracle writes a path-only `write_file` before a write (`train:data --path-only-write-weight`): never, as the lab's oracle. */
  pathOnlyWriteWeight: "0",
  /** Both stages' workspace oracle writes `write_file`'s content before its path (`train:data --content-first-writes`): no, as the lab's oracle (docs/training.md, section 7, session 28: a cut-down run read below the committed weights). */
  contentFirstWrites: false as boolean,
  /** Both stages' workspace calls after a look-up that found no such file say so in their think block first (`train:data --not-found-thoughts`): no, as the committed weights' data. */
  notFoundThoughts: false as boolean,
} as const;

/**
 * The second stage (docs/training.md, section 7, measured it; builtin:trained's recipe runs it for 720 s): from the
 * first stage's weights, at half its peak learning rate and a short warm-up, on data with four times the calculator's
 * episodes (the calculator needed more updates to copy the question's numbers into its calls) and the first stage's
 * own states on the puzzles and the number guess (its weights writing half their training turns, sampled, labelled by
 * the oracle), with a tenth of the loss on the context after the shared prompt.
 */
export const SECOND_STAGE = {
  scale: "calculator=4",
  contextLossWeight: "0.1",
  lr: "5e-4",
  warmup: "30",
  evalEvery: "300",
  timeLimit: "720",
  /** How much more often than each other mistake the workspace oracle looks up a look-alike file (`train:data --look-alike-weight`): as the lab's oracle. */
  lookAlikeWeight: "1",
} as const;

const TORCH_MISSING =
  `${PYTHON} cannot import torch. Install Debian's PyTorch and the threaded OpenBLAS it should run on ` +
  "(without it torch falls back to the reference BLAS, several times slower), and jemalloc:\n  sudo apt-get install python3-torch libopenblas0-pthread libjemalloc2";

/**
 * jemalloc, where Debian's `libjemalloc2` put it. glibc hands every freed tensor above 32 MB (the attention scores)
 * back to the kernel, and the next step faults the same memory in again: measured on a fresh 2-core VM, ~94,000 page
 * faults a second, half the CPU in the kernel and ~760 tokens read/s; under jemalloc, told to keep what it freed,
 * ~2,600 tokens read/s on the same steps.
 */
const JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";

/** The training's environment: jemalloc preloaded (keeping freed memory) when it is installed and nothing else is. */
export function trainingEnv(env: NodeJS.ProcessEnv = process.env, jemalloc: string | null = existsSync(JEMALLOC) ? JEMALLOC : null): NodeJS.ProcessEnv {
  if (jemalloc === null || env.LD_PRELOAD) return env;
  return { ...env, LD_PRELOAD: jemalloc, MALLOC_CONF: env.MALLOC_CONF ?? "dirty_decay_ms:-1,muzzy_decay_ms:-1" };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      size: { type: "string", default: "trained" },
      steps: { type: "string", default: RECIPE.steps },
      episodes: { type: "string", default: "1200" },
      "held-out": { type: "string", default: "60" },
      "error-rate": { type: "string", default: "0.2" },
      seed: { type: "string", default: "0" },
      work: { type: "string", default: join(ROOT, "training", "out") },
      // builtin:trained's run: 70 minutes of training on this project's 2-core machine (docs/training.md, section 4).
      "time-limit": { type: "string", default: "4200" },
      "no-prefix-grad": { type: "boolean", default: false },
      "context-loss-weight": { type: "string", default: RECIPE.contextLossWeight },
      "copy-weight": { type: "string", default: RECIPE.copyWeight },
      // Episodes × longest length² per batch at most (training.train's --attention-budget: memory, and how many
      // long episodes share one run of their common prompt).
      "attention-budget": { type: "string", default: RECIPE.attentionBudget },
      scale: { type: "string", default: RECIPE.scale },
      // States the learner reaches, labelled by the oracle (train:data --learner; docs/training.md, section 1).
      learner: { type: "string" },
      "learner-rate": { type: "string" },
      "learner-plans": { type: "string" },
      "rename-rate": { type: "string", default: RECIPE.renameRate },
      "rename-same-tokens": { type: "boolean", default: RECIPE.renameSameTokens },
      "path-only-write-weight": { type: "string", default: RECIPE.pathOnlyWriteWeight },
      "content-first-writes": { type: "boolean", default: RECIPE.contentFirstWrites },
      "not-found-thoughts": { type: "boolean", default: RECIPE.notFoundThoughts },
      // The second stage's seconds of training (0: none, the first stage's weights are the result).
      "second-stage-time-limit": { type: "string", default: SECOND_STAGE.timeLimit },
      // The second stage's data: the workspace oracle's look-alike look-up (answered "No such file") this many times as often as each other mistake.
      "second-stage-look-alike-weight": { type: "string", default: SECOND_STAGE.lookAlikeWeight },
      // Skip the first stage: the second starts from this weights file (a finished first stage's).
      "first-stage": { type: "string" },
      // Steps of random runs repeated at varying distances the first stage's decoder learns to copy before the stage starts (0: none).
      "induction-steps": { type: "string" },
      // Byte-pair merges (npm run train:vocab's file, or a weights file's) to tokenize both stages' data with;
      // else --merges N are learned into <work>/vocabulary.json first (0: the byte-level vocabulary).
      vocabulary: { type: "string" },
      merges: { type: "string" },
      device: { type: "string", default: "auto" },
      // The first stage's data as <work>/data/ holds it; the second stage's too where it was made from these first-stage weights.
      "skip-data": { type: "boolean", default: false },
      resume: { type: "boolean", default: false },
      install: { type: "boolean", default: false },
    },
  }).values;
}

function runPython(args: string[]): number {
  const result = spawnSync(PYTHON, args, { cwd: ROOT, stdio: "inherit", env: trainingEnv() });
  if (result.error) throw new Error(`cannot run ${PYTHON}: ${result.error.message}`);
  return result.status ?? 1;
}

export async function main(argv: string[]): Promise<number> {
  let values;
  try {
    values = parse(argv);
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!["trained", "tiny"].includes(values.size)) {
    console.error(`--size: expected trained or tiny, got ${values.size}\n${USAGE}`);
    return 2;
  }
  if (!["auto", "cpu", "cuda"].includes(values.device)) {
    console.error(`--device: expected auto, cpu or cuda, got ${values.device}\n${USAGE}`);
    return 2;
  }
  const contextWeight = Number(values["context-loss-weight"]);
  if (!(contextWeight >= 0)) {
    console.error(`--context-loss-weight: expected a number ≥ 0, got ${values["context-loss-weight"]}\n${USAGE}`);
    return 2;
  }
  const copyWeight = Number(values["copy-weight"]);
  if (!(copyWeight >= 1) || values["copy-weight"].trim() === "") {
    console.error(`--copy-weight: expected a number ≥ 1, got ${values["copy-weight"]}\n${USAGE}`);
    return 2;
  }
  if (!(Number(values["attention-budget"]) > 0)) {
    console.error(`--attention-budget: expected a number > 0, got ${values["attention-budget"]}\n${USAGE}`);
    return 2;
  }
  const secondStageSeconds = Number(values["second-stage-time-limit"]);
  if (!(secondStageSeconds >= 0)) {
    console.error(`--second-stage-time-limit: expected seconds ≥ 0, got ${values["second-stage-time-limit"]}\n${USAGE}`);
    return 2;
  }
  // Every number is checked here, before anything runs (a stage takes an hour: a bad option must not wait for it).
  const whole = (name: string, min: number) => {
    const text = (values as Record<string, string | boolean | undefined>)[name] as string;
    const n = Number(text);
    if (text.trim() === "" || !Number.isInteger(n) || n < min) return `--${name}: expected a whole number ≥ ${min}, got ${text}`;
    return null;
  };
  const errorRate = Number(values["error-rate"]);
  const timeLimit = Number(values["time-limit"]);
  const badNumber =
    whole("steps", 1) ??
    whole("episodes", 1) ??
    whole("held-out", 0) ??
    whole("seed", 0) ??
    (values["error-rate"].trim() === "" || !(errorRate >= 0 && errorRate <= 1) ? `--error-rate: expected a number in [0, 1], got ${values["error-rate"]}` : null) ??
    (values["time-limit"].trim() === "" || !(timeLimit >= 0) ? `--time-limit: expected seconds ≥ 0, got ${values["time-limit"]}` : null);
  if (badNumber) {
    console.error(`${badNumber}\n${USAGE}`);
    return 2;
  }
  let learner: TrainDataOptions["learner"];
  let renameRate: number;
  let secondStageLookAlikeWeight: number;
  let pathOnlyWriteWeight: number;
  try {
    learner = recipeLearner(values);
    // The second stage's learner options too, now (its learner is the first stage's weights, named later).
    if (secondStageSeconds > 0) secondStageLearner("the first stage's weights", values);
    renameRate = parseRenameRate(values["rename-rate"]);
    secondStageLookAlikeWeight = parseLookAlikeWeight(values["second-stage-look-alike-weight"], "--second-stage-look-alike-weight");
    pathOnlyWriteWeight = parsePathOnlyWriteWeight(values["path-only-write-weight"]);
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const firstStage = values["first-stage"] === undefined ? null : resolve(values["first-stage"]);
  if (firstStage !== null && (secondStageSeconds === 0 || !existsSync(firstStage))) {
    console.error(`--first-stage: ${secondStageSeconds === 0 ? "needs a second stage (--second-stage-time-limit > 0)" : `${firstStage} does not exist`}\n${USAGE}`);
    return 2;
  }
  const inductionSteps = inductionStepsFor(values["induction-steps"], firstStage);
  if (!Number.isInteger(inductionSteps) || inductionSteps < 0 || (inductionSteps > 0 && firstStage !== null)) {
    const why = firstStage !== null ? "warms up the first stage's decoder, and --first-stage skips that stage" : `expected a whole number ≥ 0, got ${values["induction-steps"]}`;
    console.error(`--induction-steps: ${why}\n${USAGE}`);
    return 2;
  }
  const merges = Number(values.merges ?? RECIPE.merges);
  if (!Number.isInteger(merges) || merges < 0 || (values.merges !== undefined && values.vocabulary !== undefined)) {
    const why = values.vocabulary !== undefined ? "give it or --vocabulary, not both" : `expected an integer ≥ 0, got ${values.merges}`;
    console.error(`--merges: ${why}\n${USAGE}`);
    return 2;
  }
  if (values.vocabulary !== undefined && !existsSync(values.vocabulary)) {
    console.error(`--vocabulary: ${resolve(values.vocabulary)} does not exist\n${USAGE}`);
    return 2;
  }
  const work = resolve(values.work);
  const data = join(work, "data");
  const stage2 = join(work, "stage2");
  if (spawnSync(PYTHON, ["-c", "import torch"], { stdio: "ignore" }).status !== 0) {
    console.error(TORCH_MISSING);
    return 1;
  }
  if (!existsSync(JEMALLOC) && !process.env.LD_PRELOAD) {
    console.warn(`train:model: ${JEMALLOC} is missing: on a machine whose fresh memory is slow, glibc's page faults can make the training several times slower (sudo apt-get install libjemalloc2)`);
  }
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  // The data's vocabulary: the one given; a first stage's own (the second stage continues its weights); or merges
  // learned here first; or none (byte-level).
  let vocabulary = values.vocabulary !== undefined ? resolve(values.vocabulary) : (firstStage ?? undefined);
  if (vocabulary === undefined && merges > 0) {
    vocabulary = join(work, "vocabulary.json");
    if (values["skip-data"] && existsSync(vocabulary)) console.log(`== vocabulary: ${vocabulary} as it is (--skip-data)`);
    else {
      console.log(`== vocabulary (${merges} merges) → ${vocabulary}`);
      await writeVocabulary({ out: vocabulary, merges, episodes: Number(values.episodes), errorRate: Number(values["error-rate"]), seed: Number(values.seed), scales: parseScales(values.scale === "none" ? undefined : values.scale) });
    }
  }
  const writeData = async (out: string, scale: string | undefined, stageLearner: TrainDataOptions["learner"], reuse: boolean, lookAlikeWeight = 1): Promise<number> => {
    if (reuse) {
      console.log(`== training data: ${out} as it is (--skip-data)`);
      return 0;
    }
    console.log(`== training data → ${out}`);
    try {
      await writeTrainingData({
        out,
        episodes: Number(values.episodes),
        heldOut: Number(values["held-out"]),
        samplesPerSeed: 10,
        errorRate: Number(values["error-rate"]),
        seed: Number(values.seed),
        scales: parseScales(scale),
        ...(stageLearner ? { learner: stageLearner } : {}),
        ...(vocabulary !== undefined ? { vocabulary } : {}),
        ...(renameRate > 0 ? { renameRate } : {}),
        ...(renameRate > 0 && values["rename-same-tokens"] ? { renameSameTokens: true } : {}),
        ...(lookAlikeWeight > 1 ? { lookAlikeWeight } : {}),
        ...(pathOnlyWriteWeight > 0 ? { pathOnlyWriteWeight } : {}),
        ...(values["content-first-writes"] ? { contentFirstWrites: true } : {}),
        ...(values["not-found-thoughts"] ? { notFoundThoughts: true } : {}),
      });
      return 0;
    } catch (error) {
      console.error(`train:model: the training data: ${(error as Error).message}\n${USAGE}`);
      return error instanceof RangeError ? 2 : 1;
    }
  };
  const train = (args: string[]): number => {
    const common = ["-m", "training.train", "--size", values.size, "--steps", values.steps, "--seed", values.seed, "--device", values.device];
    const status = runPython([...common, ...args, ...(values.resume ? ["--resume"] : [])]);
    if (status !== 0) console.error(`train:model: python3 -m training.train exited with ${status}`);
    return status === 0 ? 0 : status === 2 ? 2 : 1;
  };

  let weights = firstStage ?? join(work, "weights.safetensors");
  if (firstStage === null) {
    const dataFailed = await writeData(data, values.scale === "none" ? undefined : values.scale, learner, values["skip-data"]);
    if (dataFailed) return dataFailed;
    const warmUp = inductionWarmUp({ steps: inductionSteps, data, work, size: values.size, seed: values.seed, device: values.device });
    if (warmUp !== null && !(values.resume && existsSync(warmUp.weights))) {
      console.log(`== induction warm-up (${inductionSteps} steps) → ${warmUp.weights} at ${elapsed()}`);
      const status = runPython(warmUp.args);
      if (status !== 0) {
        console.error(`train:model: python3 -m training.induction_probe exited with ${status}`);
        return status === 2 ? 2 : 1;
      }
    }
    console.log(`== training, first stage (${values.size}, ${values.steps} steps, seed ${values.seed}) at ${elapsed()}`);
    const status = train([
      ...["--data", data, "--out", work],
      ...(warmUp !== null ? ["--init", warmUp.weights] : []),
      ...(Number(values["time-limit"]) > 0 ? ["--time-limit", values["time-limit"]] : []),
      ...(values["no-prefix-grad"] ? ["--no-prefix-grad"] : []),
      ...(Number(values["context-loss-weight"]) > 0 ? ["--context-loss-weight", values["context-loss-weight"]] : []),
      ...(copyWeight !== 1 ? ["--copy-weight", String(copyWeight)] : []),
      ...["--attention-budget", values["attention-budget"]],
    ]);
    if (status) return status;
  }
  if (secondStageSeconds > 0) {
    const stageData = join(stage2, "data");
    const stageLearner = secondStageLearner(weights, values); // checked before anything ran
    const dataFailed = await writeData(stageData, SECOND_STAGE.scale, stageLearner, values["skip-data"] && dataMadeBy(stageData, stageLearner ? weights : null), secondStageLookAlikeWeight);
    if (dataFailed) return dataFailed;
    console.log(`== training, second stage (from ${weights}, ${secondStageSeconds} s) at ${elapsed()}`);
    const status = train([
      ...["--data", stageData, "--out", stage2, "--init", weights, "--time-limit", String(secondStageSeconds)],
      ...["--lr", SECOND_STAGE.lr, "--warmup", SECOND_STAGE.warmup, "--context-loss-weight", SECOND_STAGE.contextLossWeight],
      ...(copyWeight !== 1 ? ["--copy-weight", String(copyWeight)] : []),
      ...["--eval-every", SECOND_STAGE.evalEvery],
    ]);
    if (status) return status;
    weights = join(stage2, "weights.safetensors");
  }
  if (values.install) {
    // Summed up before the copy: a first stage given as the committed file is read (its SHA-256, its summary) before it is replaced.
    const summary = runSummary(work, secondStageSeconds > 0 ? stage2 : null, firstStage);
    copyFileSync(weights, TRAINED_WEIGHTS_FILE);
    writeFileSync(TRAINED_SUMMARY_FILE, JSON.stringify(summary, null, 2) + "\n");
    console.log(`== installed ${weights} as ${TRAINED_WEIGHTS_FILE} (summary: ${TRAINED_SUMMARY_FILE})`);
  }
  // Installed, it is builtin:trained itself; else a folder of its own under <work>/models/, since builtin:trained's
  // folder is rebuilt from the committed file whenever it is loaded and its stamp names other weights.
  console.log(`== building the model folder at ${elapsed()}`);
  const built = values.install ? writeBuiltinFolder(PUBLIC_MODELS_DIR, "trained", true) : writeTrainedModel(join(work, "models"), weights, true);
  console.log(`built ${built.id} from ${weights} into ${built.dir} in ${built.buildMs.toFixed(0)} ms; done in ${elapsed()}`);
  if (!values.install) console.log(`try it: npm run bench:policy-quality -- --model ${built.dir} (or "model": "${built.dir}" in a scenario's policy)`);
  return 0;
}

/**
 * The learner of the first stage's data: the recipe's (`RECIPE.learner`: none) unless `--learner` names a model or
 * weights file (then the rate and plans given, or the recipe's). Throws a RangeError naming the option.
 */
export function recipeLearner(values: { learner?: string; "learner-rate"?: string; "learner-plans"?: string }): TrainDataOptions["learner"] {
  // Without --learner the first stage has the recipe's (none) and a given rate or plans are the second stage's alone.
  if (values.learner === undefined && RECIPE.learner === "none") return undefined;
  const learner = values.learner ?? RECIPE.learner;
  if (learner === "none") return learnerOption({ "learner-rate": values["learner-rate"], "learner-plans": values["learner-plans"] });
  return learnerOption({
    learner,
    "learner-rate": values["learner-rate"] ?? RECIPE.learnerRate,
    "learner-plans": values["learner-plans"] ?? RECIPE.learnerPlans,
  });
}

/**
 * The warm-up's steps: those given, else the recipe's, which belong to its first stage: with a given first stage
 * (`--first-stage`) none unless asked for (which `main` refuses). NaN where the text is no number.
 */
export function inductionStepsFor(given: string | undefined, firstStage: string | null): number {
  return Number(given ?? (firstStage !== null ? "0" : RECIPE.inductionSteps));
}

/**
 * The induction warm-up (docs/training.md, section 7, "Session 25"): before the first stage, the decoder learns to
 * copy runs of random tokens repeated at varying distances (`python3 -m training.induction_probe`, the data's
 * vocabulary), and the first stage starts from those weights (`training.train --init`). At the recipe's size a head
 * that looks a token up by its content forms after ~500–800 such steps on this machine, where the environments' data
 * alone formed none in 2,000 steps. It copies a task's file name in short prompts and lowers the first stage's held-out
 * loss (0.0885 against 0.158). With half the workspace's files renamed (session 26) it took the first stage to the
 * workspace's 100% well-formed greedy, hence in the recipe since session 27. Null for 0 steps.
 */
export function inductionWarmUp(o: { steps: number; data: string; work: string; size: string; seed: string; device: string }): { weights: string; args: string[] } | null {
  if (o.steps === 0) return null;
  const weights = join(o.work, "induction.safetensors");
  const args = ["-m", "training.induction_probe", "--data", o.data, "--size", o.size, "--steps", String(o.steps), "--seed", o.seed, "--device", o.device, "--log-every", "50", "--out", weights];
  return { weights, args };
}

/**
 * The second stage's learner: the first stage's own weights, at the rate and on the plans given (`--learner-rate`,
 * `--learner-plans`: both stages'), else the recipe's, unless `--learner none` turns learners off.
 */
export function secondStageLearner(
  firstStageWeights: string,
  values: { learner?: string; "learner-rate"?: string; "learner-plans"?: string },
): TrainDataOptions["learner"] {
  if (values.learner === "none") return undefined;
  return learnerOption({
    learner: firstStageWeights,
    "learner-rate": values["learner-rate"] ?? RECIPE.learnerRate,
    "learner-plans": values["learner-plans"] ?? RECIPE.learnerPlans,
  });
}

const fileSha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/**
 * Whether a stage's data folder was made with these learner weights (`data.json`'s learner SHA-256; null: no learner):
 * the second stage's data comes from the first stage's weights, so `--skip-data` reuses it only when those are the
 * weights it was made from, and writes it again after a new first stage.
 */
export function dataMadeBy(dataDir: string, learnerWeights: string | null): boolean {
  const manifestFile = join(dataDir, "data.json");
  if (!existsSync(manifestFile)) return false;
  const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as { learner?: { weights?: { sha256?: string } | null } };
  if (learnerWeights === null) return manifest.learner === undefined;
  return manifest.learner?.weights?.sha256 === fileSha256(learnerWeights);
}

/**
 * The committed summary of a run: the last stage's `train.json`, with the first stage's under `first_stage` (its
 * loss history too) when there were two. A first stage given as a file is named by `portableName` and its SHA-256,
 * with its own summary where one is known: `train.json` beside it (a `train:model` work folder), or builtin:trained's
 * committed summary when it is builtin:trained's committed weights.
 */
export function runSummary(work: string, stage2: string | null, firstStage: string | null): Record<string, unknown> {
  const read = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  if (stage2 === null) return read(join(work, "train.json"));
  const stage = read(join(stage2, "train.json"));
  if (firstStage === null) return { ...stage, first_stage: read(join(work, "train.json")) };
  const sha256 = fileSha256(firstStage);
  const summaryFile = resolve(firstStage) === resolve(TRAINED_WEIGHTS_FILE) ? TRAINED_SUMMARY_FILE : join(dirname(firstStage), "train.json");
  const summary = existsSync(summaryFile) ? { summary: read(summaryFile) } : {};
  return { ...stage, first_stage: { weights: portableName(firstStage), sha256, ...summary } };
}

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
