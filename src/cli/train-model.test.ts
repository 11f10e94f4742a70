/**
 * train:model's environment for PyTorch (jemalloc preloaded, keeping the memory it frees: `trainingEnv`), its
 * `--scale` option, its second stage's options and learner, the committed summary of a two-stage run, and the learner's options
 * (`--learner`, `--learner-rate`, `--learner-plans`) of both commands.
 */

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { learnerOption, main as trainData, parseOptions, parseScales, portableName, writeTrainingData } from "./train-data.js";
import { TRAINED_SUMMARY_FILE, TRAINED_WEIGHTS_FILE } from "../policy/builtin-model/write-folder.js";
import { main as trainVocab, VOCABULARY_RECIPE_SCALE } from "./train-vocab.js";
import { readVocabulary, VOCABULARY_FORMAT } from "./training-vocabulary.js";
import { dataMadeBy, inductionStepsFor, inductionWarmUp, main, RECIPE, recipeLearner, runSummary, SECOND_STAGE, secondStageLearner, trainingEnv } from "./train-model.js";

const work = mkdtempSync(join(tmpdir(), "train-model-"));

/** train:model's exit status for `args` and the last error it printed (console.error silenced meanwhile). */
async function refusal(args: string[]): Promise<{ status: number; message: unknown }> {
  const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
  try {
    const status = await main(args);
    return { status, message: errors.mock.calls.at(-1)?.[0] };
  } finally {
    errors.mockRestore();
  }
}
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("trainingEnv", () => {
  it("preloads jemalloc and tells it to keep freed pages", () => {
    const env = trainingEnv({ PATH: "/bin" }, "/lib/libjemalloc.so.2");
    expect(env).toEqual({ PATH: "/bin", LD_PRELOAD: "/lib/libjemalloc.so.2", MALLOC_CONF: "dirty_decay_ms:-1,muzzy_decay_ms:-1" });
  });

  it("keeps a preload or a jemalloc configuration the user set", () => {
    expect(trainingEnv({ LD_PRELOAD: "/lib/libtcmalloc.so" }, "/lib/libjemalloc.so.2")).toEqual({ LD_PRELOAD: "/lib/libtcmalloc.so" });
    expect(trainingEnv({ MALLOC_CONF: "narenas:1" }, "/lib/libjemalloc.so.2").MALLOC_CONF).toBe("narenas:1");
  });

  it("leaves the environment as it is where jemalloc is not installed", () => {
    const env = { PATH: "/bin" };
    expect(trainingEnv(env, null)).toBe(env);
  });
});

describe("--scale (train:data, train:model)", () => {
  it("train:vocab's default is the recipe's, so the command alone gives builtin:trained's vocabulary", () => {
    expect(VOCABULARY_RECIPE_SCALE).toBe(RECIPE.scale);
  });

  it("reads plan names and whole multiples", () => {
    expect(parseScales("calculator=4, workspace=2")).toEqual({ calculator: 4, workspace: 2 });
    expect(parseScales(undefined)).toEqual({});
  });

  it("names what is wrong: an unknown plan, a multiple that is not a whole number ≥ 1", () => {
    expect(() => parseScales("calc=4")).toThrow(/--scale: unknown plan 'calc' \(plans: sliding_puzzle, .*calculator/);
    expect(() => parseScales("calculator=0.5")).toThrow("--scale: calculator: expected a whole multiple ≥ 1, got '0.5'");
    expect(() => parseScales("calculator")).toThrow("--scale: calculator: expected a whole multiple ≥ 1, got ''");
  });
});

describe("the two stages", () => {
  it("sum a two-stage run up as the second stage's summary with the first stage's inside", () => {
    mkdirSync(join(work, "stage2"), { recursive: true });
    writeFileSync(join(work, "train.json"), JSON.stringify({ steps: 1697, history: [{ step: 10 }] }));
    writeFileSync(join(work, "stage2", "train.json"), JSON.stringify({ steps: 950, init: "w.safetensors" }));
    expect(runSummary(work, join(work, "stage2"), null)).toEqual({ steps: 950, init: "w.safetensors", first_stage: { steps: 1697, history: [{ step: 10 }] } });
    expect(runSummary(work, null, null)).toEqual({ steps: 1697, history: [{ step: 10 }] });
  });

  it("name a first stage given as a file by its name and SHA-256, with the summary beside it where there is one", () => {
    const first = join(work, "given-first");
    mkdirSync(first, { recursive: true });
    writeFileSync(join(first, "weights.safetensors"), "first-stage bytes");
    const sha256 = createHash("sha256").update("first-stage bytes").digest("hex");
    const stage2 = join(work, "stage2");
    expect(runSummary(work, stage2, join(first, "weights.safetensors"))).toEqual({
      steps: 950,
      init: "w.safetensors",
      // Outside the project: its file name only (another machine's absolute path names nothing there).
      first_stage: { weights: "weights.safetensors", sha256 },
    });
    writeFileSync(join(first, "train.json"), JSON.stringify({ steps: 1895 }));
    expect(runSummary(work, stage2, join(first, "weights.safetensors")).first_stage).toEqual({ weights: "weights.safetensors", sha256, summary: { steps: 1895 } });
    // builtin:trained's committed weights as the first stage: its committed summary comes along.
    const committed = runSummary(work, stage2, TRAINED_WEIGHTS_FILE).first_stage as { sha256: string; summary: unknown };
    expect(committed).toMatchObject({ weights: "src/policy/builtin-model/weights/trained.safetensors" });
    expect(committed.sha256).toBe(createHash("sha256").update(readFileSync(TRAINED_WEIGHTS_FILE)).digest("hex"));
    expect(committed.summary).toEqual(JSON.parse(readFileSync(TRAINED_SUMMARY_FILE, "utf8")));
  });

  it("name files in summaries portably: relative inside the project, by file name outside it, model ids as given", () => {
    expect(portableName(TRAINED_WEIGHTS_FILE)).toBe("src/policy/builtin-model/weights/trained.safetensors");
    writeFileSync(join(work, "elsewhere.safetensors"), "");
    expect(portableName(join(work, "elsewhere.safetensors"))).toBe("elsewhere.safetensors");
    expect(portableName("builtin:trained")).toBe("builtin:trained");
  });

  it("reuse the second stage's data under --skip-data only when it was made from the same first-stage weights", () => {
    const dir = join(work, "stage-data");
    const weights = join(work, "first-weights.safetensors");
    writeFileSync(weights, "weights A");
    mkdirSync(dir, { recursive: true });
    expect(dataMadeBy(dir, weights)).toBe(false); // no data.json: nothing to reuse
    const sha = (text: string) => createHash("sha256").update(text).digest("hex");
    writeFileSync(join(dir, "data.json"), JSON.stringify({ learner: { model: "first-weights.safetensors", weights: { sha256: sha("weights A") } } }));
    expect(dataMadeBy(dir, weights)).toBe(true);
    expect(dataMadeBy(dir, null)).toBe(false); // made with a learner, asked for none
    writeFileSync(weights, "weights B"); // a new first stage
    expect(dataMadeBy(dir, weights)).toBe(false);
    writeFileSync(join(dir, "data.json"), JSON.stringify({ seed: 0 }));
    expect(dataMadeBy(dir, null)).toBe(true);
  });

  it("give the second stage the first stage's weights as its learner, on the plans and rate given (else the recipe's), unless learners are off", () => {
    expect(secondStageLearner("/w/first.safetensors", {})).toEqual({ model: "/w/first.safetensors", rate: 0.5, plans: RECIPE.learnerPlans.split(",") });
    // --learner names the first stage's learner only; the second stage's is always the first stage's own weights.
    expect(secondStageLearner("/w/first.safetensors", { learner: "builtin:tiny" })!.model).toBe("/w/first.safetensors");
    expect(secondStageLearner("/w/first.safetensors", { learner: "none" })).toBeUndefined();
    // --learner-plans and --learner-rate are both stages'.
    expect(secondStageLearner("/w/first.safetensors", { "learner-plans": "workspace,number_guess", "learner-rate": "0.25" })).toEqual({
      model: "/w/first.safetensors",
      rate: 0.25,
      plans: ["workspace", "number_guess"],
    });
    expect(SECOND_STAGE).toMatchObject({ scale: "calculator=4", lr: "5e-4", warmup: "30", timeLimit: "720" });
  });

  it("warm the first stage's decoder up on repeated runs (the recipe: 1,144 steps), into <work>/induction.safetensors, which the first stage starts from", () => {
    expect(RECIPE.inductionSteps).toBe("1144");
    expect(RECIPE.steps).toBe("3000"); // the committed weights' first stage
    expect(RECIPE.renameRate).toBe("0.5");
    expect(inductionStepsFor(undefined, null)).toBe(1144);
    // A given first stage skips the recipe's warm-up with it; one asked for by name is main's to refuse.
    expect(inductionStepsFor(undefined, "/w/first.safetensors")).toBe(0);
    expect(inductionStepsFor("800", "/w/first.safetensors")).toBe(800);
    expect(inductionStepsFor("0", null)).toBe(0);
    const o = { data: "/w/data", work: "/w", size: "trained", seed: "3", device: "cpu" };
    expect(inductionWarmUp({ ...o, steps: 0 })).toBeNull();
    const warmUp = inductionWarmUp({ ...o, steps: 800 })!;
    expect(warmUp.weights).toBe(join("/w", "induction.safetensors"));
    expect(warmUp.args).toEqual(["-m", "training.induction_probe", "--data", "/w/data", "--size", "trained", "--steps", "800", "--seed", "3", "--device", "cpu", "--log-every", "50", "--out", warmUp.weights]);
  });

  it("refuse a first stage that does not exist, or one with no second stage to start, a negative time, a budget that is no number", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      expect(await main(["--work", work, "--second-stage-time-limit", "600", "--first-stage", join(work, "missing.safetensors")])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("missing.safetensors does not exist");
      writeFileSync(join(work, "first.safetensors"), "");
      expect(await main(["--work", work, "--first-stage", join(work, "first.safetensors"), "--second-stage-time-limit", "0"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--first-stage: needs a second stage");
      expect(await main(["--work", work, "--second-stage-time-limit=-5"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--second-stage-time-limit: expected seconds ≥ 0, got -5");
      expect(await main(["--work", work, "--attention-budget", "lots"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--attention-budget: expected a number > 0, got lots");
      expect(await main(["--work", work, "--copy-weight", "0.5"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--copy-weight: expected a number ≥ 1, got 0.5");
      expect(RECIPE.copyWeight).toBe("1");
      expect(await main(["--work", work, "--rename-rate", "1.5"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--rename-rate: expected a number in [0, 1], got 1.5");
      expect(await main(["--work", work, "--induction-steps", "2.5"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--induction-steps: expected a whole number ≥ 0, got 2.5");
      expect(await main(["--work", work, "--first-stage", join(work, "first.safetensors"), "--induction-steps", "800"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--induction-steps: warms up the first stage's decoder, and --first-stage skips that stage");
      // Numbers and the second stage's learner options, all before anything runs (they were found after the first
      // stage's hour, or never: --time-limit abc meant no limit).
      for (const [option, value, why] of [
        ["--steps", "abc", "--steps: expected a whole number ≥ 1, got abc"],
        ["--episodes", "0", "--episodes: expected a whole number ≥ 1, got 0"],
        ["--held-out", "abc", "--held-out: expected a whole number ≥ 0, got abc"],
        ["--seed", "1.5", "--seed: expected a whole number ≥ 0, got 1.5"],
        ["--error-rate", "5", "--error-rate: expected a number in [0, 1], got 5"],
        ["--time-limit", "abc", "--time-limit: expected seconds ≥ 0, got abc"],
        ["--learner-rate", "2", "--learner-rate: expected a number in (0, 1], got 2"],
        ["--learner-plans", "bogus", "--learner-plans: unknown plan 'bogus'"],
      ]) {
        expect(await main(["--work", join(work, "never"), option!, value!])).toBe(2);
        expect(errors.mock.calls.at(-1)![0]).toContain(why);
      }
      expect(existsSync(join(work, "never"))).toBe(false);
    } finally {
      errors.mockRestore();
    }
  });
});

describe("the learner's options (--learner, --learner-rate, --learner-plans)", () => {
  it("read a model, a rate (0.5 unless given) and the plans it writes in (every plan unless given)", () => {
    expect(learnerOption({ learner: "builtin:trained" })).toEqual({ model: "builtin:trained", rate: 0.5 });
    expect(learnerOption({ learner: "m", "learner-rate": "0.25", "learner-plans": "sliding_puzzle, number_guess" })).toEqual({
      model: "m",
      rate: 0.25,
      plans: ["sliding_puzzle", "number_guess"],
    });
    expect(learnerOption({})).toBeUndefined();
  });

  it("name what is wrong: an unknown plan, an empty list, an option without a learner", () => {
    expect(() => learnerOption({ learner: "m", "learner-plans": "puzzle" })).toThrow(/--learner-plans: unknown plan 'puzzle' \(plans: sliding_puzzle, /);
    expect(() => learnerOption({ learner: "m", "learner-plans": " , " })).toThrow("--learner-plans: expected plan names, got ' , '");
    expect(() => learnerOption({ "learner-plans": "calculator" })).toThrow("--learner-plans: needs --learner <model>");
  });

  it("train:model refuses them before it starts anything, exit status 2", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      expect(await main(["--work", work, "--learner", "builtin:trained", "--learner-plans", "calc"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--learner-plans: unknown plan 'calc'");
      expect(await main(["--work", work, "--learner", "none", "--learner-rate", "0.3"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--learner-rate: needs --learner <model>");
    } finally {
      errors.mockRestore();
    }
  });

  it("train:model's first stage has no learner unless given one, then at the recipe's rate on its plans", () => {
    const plans = ["sliding_puzzle", "sliding_puzzle_shuffled", "number_guess"];
    expect(recipeLearner({})).toBeUndefined();
    expect(recipeLearner({ learner: "none" })).toBeUndefined();
    // Without --learner, the plans and rate given are the second stage's (secondStageLearner); with --learner none, nobody's.
    expect(recipeLearner({ "learner-plans": "workspace" })).toBeUndefined();
    expect(() => recipeLearner({ learner: "none", "learner-plans": "workspace" })).toThrow(/--learner-plans: needs --learner/);
    expect(RECIPE.learnerPlans.split(",")).toEqual(plans);
    expect(recipeLearner({ learner: "builtin:trained" })).toEqual({ model: "builtin:trained", rate: 0.5, plans });
    expect(recipeLearner({ learner: "/m", "learner-rate": "1" })).toEqual({ model: "/m", rate: 1, plans });
  });

  it("take a trained weights file as the learner, built into a folder of its own, and name its SHA-256", async () => {
    const file = join(import.meta.dirname, "..", "policy", "builtin-model", "fixtures", "torch-trained.safetensors");
    const out = join(work, "learner-file");
    await writeTrainingData(
      { out, episodes: 10, heldOut: 0, samplesPerSeed: 10, errorRate: 0.2, seed: 0, learner: { model: file, rate: 1, plans: ["number_guess"] } },
      () => undefined,
    );
    const manifest = JSON.parse(readFileSync(join(out, "data.json"), "utf8")) as {
      learner: { model: string; weights: { sha256: string; name: string } };
      environments: { name: string; train: { learner_turns: number } }[];
    };
    expect(manifest.learner.model).toBe("src/policy/builtin-model/fixtures/torch-trained.safetensors");
    expect(manifest.learner.weights).toEqual({ sha256: createHash("sha256").update(readFileSync(file)).digest("hex"), name: "torch-trained.safetensors" });
    expect(manifest.environments.find((e) => e.name === "number_guess")!.train.learner_turns).toBeGreaterThanOrEqual(10);
  }, 120_000);

  it("put the learner's turns in the listed plans' training split only", async () => {
    const out = join(work, "learner-plans");
    // builtin:tiny (random weights, built on demand) writes every turn of the number guess; the other plans stay the oracle's.
    await writeTrainingData(
      { out, episodes: 10, heldOut: 10, samplesPerSeed: 10, errorRate: 0.2, seed: 0, learner: { model: "builtin:tiny", rate: 1, plans: ["number_guess"] } },
      () => undefined,
    );
    const manifest = JSON.parse(readFileSync(join(out, "data.json"), "utf8")) as {
      learner: { plans: string[]; weights: unknown };
      environments: { name: string; train: { learner_turns: number; learner_slips: number; episodes: number }; held_out: { learner_turns: number } }[];
    };
    expect(manifest.learner.plans).toEqual(["number_guess"]);
    // Random weights' turns are malformed ("Answer with <guess>N</guess>."): counted as the learner's slips, and
    // marked 3 in the episodes, one span per slip.
    const guess = manifest.environments.find((e) => e.name === "number_guess")!.train;
    expect(guess.learner_slips).toBeGreaterThan(0);
    expect(guess.learner_slips).toBeLessThanOrEqual(guess.learner_turns);
    const episodes = readFileSync(join(out, "train.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { env: string; mask: string; learner_slips?: number[] });
    const guesses = episodes.filter((e) => e.env === "number_guess");
    expect(guesses.reduce((n, e) => n + (e.mask.match(/3+/g)?.length ?? 0), 0)).toBe(guess.learner_slips);
    expect(guesses.reduce((n, e) => n + (e.learner_slips?.length ?? 0), 0)).toBe(guess.learner_slips);
    expect(episodes.filter((e) => e.env !== "number_guess").every((e) => !e.mask.includes("3"))).toBe(true);
    // Which weights wrote the learner's turns: the random preset's seed here, a trained file's SHA-256 for builtin:trained.
    expect(manifest.learner.weights).toEqual({ preset: "tiny", seed: 0 });
    for (const env of manifest.environments) {
      expect(env.held_out.learner_turns, env.name).toBe(0);
      if (env.name === "number_guess") expect(env.train.learner_turns).toBeGreaterThanOrEqual(10);
      else expect(env.train.learner_turns, env.name).toBe(0);
    }
  }, 120_000);
});

describe("train:data's vocabulary (--vocabulary)", () => {
  const merges = [["d", "i"], ["di", "f"], ["dif", "f"]] as const;
  const vocabularyFile = join(work, "vocabulary.json");
  writeFileSync(vocabularyFile, JSON.stringify({ format: VOCABULARY_FORMAT, merges }));

  it("train:vocab learns a vocabulary file from the oracle's rollouts that --vocabulary reads", async () => {
    const out = join(work, "learned.json");
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    try {
      expect(await trainVocab(["--out", out, "--merges", "40", "--episodes", "10"])).toBe(0);
    } finally {
      log.mockRestore();
    }
    const learned = readVocabulary(out);
    expect(learned.merges).toHaveLength(40);
    expect(JSON.parse(readFileSync(out, "utf8")).learned_from).toMatchObject({ episodes_per_plan: 10, merges_asked: 40 });
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      expect(await trainVocab(["--out", out, "--merges", "0"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--merges: expected an integer ≥ 1, got 0");
    } finally {
      errors.mockRestore();
    }
  }, 120_000);

  it("tokenizes with the merges and records them, their size and the ids the model may emit in data.json", async () => {
    const out = join(work, "vocabulary-data");
    await writeTrainingData({ out, episodes: 10, heldOut: 0, samplesPerSeed: 10, errorRate: 0, seed: 0, vocabulary: vocabularyFile }, () => undefined);
    const manifest = JSON.parse(readFileSync(join(out, "data.json"), "utf8")) as { vocabulary: { size: number; merges: string[][]; allowed_ids: number[]; sha256: string } };
    expect(manifest.vocabulary).toMatchObject({ size: 268, merges, sha256: readVocabulary(vocabularyFile).sha256 });
    expect(manifest.vocabulary.allowed_ids.slice(-3)).toEqual([265, 266, 267]);
    const calculator = readFileSync(join(out, "train.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { env: string; ids: number[] }).filter((e) => e.env === "calculator");
    // "diff" is one token wherever the calculator's calls subtract.
    expect(calculator.some((e) => e.ids.includes(267))).toBe(true);
  }, 120_000);

  it("--rename-rate renames the task's file in that share of the workspace's training episodes, and data.json says so", async () => {
    const out = join(work, "renamed-data");
    await writeTrainingData({ out, episodes: 20, heldOut: 0, samplesPerSeed: 10, errorRate: 0, seed: 0, renameRate: 1 }, () => undefined);
    const manifest = JSON.parse(readFileSync(join(out, "data.json"), "utf8")) as { rename_rate: number; rename_same_tokens: boolean; environments: { name: string; train: { renamed: number } }[] };
    expect(manifest.rename_rate).toBe(1);
    expect(manifest.rename_same_tokens).toBe(false);
    const renamed = Object.fromEntries(manifest.environments.map((e) => [e.name, e.train.renamed]));
    expect(renamed.workspace).toBeGreaterThan(0);
    expect(renamed.calculator).toBe(0);
    expect(parseOptions(["--rename-rate", "0.5"])).toMatchObject({ renameRate: 0.5 });
    expect(parseOptions(["--rename-rate", "half"])).toBe("--rename-rate: expected a number in [0, 1], got half");
    expect(parseOptions(["--rename-rate", "0.5", "--rename-same-tokens"])).toMatchObject({ renameRate: 0.5, renameSameTokens: true });
    expect(parseOptions([])).not.toHaveProperty("renameSameTokens");
    expect(RECIPE.renameSameTokens).toBe(false);
    const same = join(work, "renamed-same-tokens-data");
    await writeTrainingData({ out: same, episodes: 20, heldOut: 0, samplesPerSeed: 10, errorRate: 0, seed: 0, renameRate: 1, renameSameTokens: true }, () => undefined);
    expect((JSON.parse(readFileSync(join(same, "data.json"), "utf8")) as { rename_same_tokens: boolean }).rename_same_tokens).toBe(true);
  }, 120_000);

  it("--look-alike-weight makes the training split's workspace oracle look up a look-alike more often, the held-out split as it was", async () => {
    const write = async (name: string, lookAlikeWeight?: number) => {
      const out = join(work, name);
      await writeTrainingData({ out, episodes: 20, heldOut: 10, samplesPerSeed: 10, errorRate: 0.5, seed: 0, scales: { workspace: 6 }, ...(lookAlikeWeight ? { lookAlikeWeight } : {}) }, () => undefined);
      const read = (split: string) => readFileSync(join(out, `${split}.jsonl`), "utf8");
      const workspace = read("train").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { env: string; ids: number[] }).filter((e) => e.env === "workspace");
      const text = (ids: number[]) => String.fromCharCode(...ids.filter((id) => id < 256));
      return {
        lookedUpNothing: workspace.filter((e) => text(e.ids).includes("No such file")).length,
        episodes: workspace.length,
        heldOut: read("held_out"),
        manifest: JSON.parse(readFileSync(join(out, "data.json"), "utf8")) as { look_alike_weight: number },
      };
    };
    const plain = await write("look-alike-1");
    const weighted = await write("look-alike-16", 16);
    expect(weighted.episodes).toBe(plain.episodes);
    expect(weighted.lookedUpNothing).toBeGreaterThan(2 * Math.max(1, plain.lookedUpNothing));
    expect(weighted.heldOut).toBe(plain.heldOut);
    expect([plain.manifest.look_alike_weight, weighted.manifest.look_alike_weight]).toEqual([1, 16]);
    expect(parseOptions(["--look-alike-weight", "4"])).toMatchObject({ lookAlikeWeight: 4 });
    expect(parseOptions(["--look-alike-weight", "0"])).toBe("--look-alike-weight: expected a whole number ≥ 1, got 0");
    expect(await refusal(["--work", work, "--second-stage-look-alike-weight", "2.5"])).toEqual({
      status: 2,
      message: expect.stringContaining("--second-stage-look-alike-weight: expected a whole number ≥ 1, got 2.5"),
    });
    expect(SECOND_STAGE.lookAlikeWeight).toBe("1");
  }, 240_000);

  it("--path-only-write-weight puts write_file calls with a path and no content among the training split's workspace mistakes, masked, the held-out split as it was", async () => {
    const write = async (name: string, pathOnlyWriteWeight?: number) => {
      const out = join(work, name);
      await writeTrainingData({ out, episodes: 20, heldOut: 10, samplesPerSeed: 10, errorRate: 0.5, seed: 0, scales: { workspace: 3 }, ...(pathOnlyWriteWeight ? { pathOnlyWriteWeight } : {}) }, () => undefined);
      const read = (split: string) => readFileSync(join(out, `${split}.jsonl`), "utf8");
      const workspace = read("train").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { env: string; ids: number[]; mask: string }).filter((e) => e.env === "workspace");
      // Byte-level ids: each path-only call's bytes, and whether any of them is learned.
      const pathOnly = /\{"name": "write_file", "arguments": \{"path": "[^"]*"\}\}/g;
      const calls = workspace.flatMap((e) => [...String.fromCharCode(...e.ids).matchAll(pathOnly)].map((m) => e.mask.slice(m.index, m.index + m[0].length)));
      return {
        calls,
        heldOut: read("held_out"),
        manifest: JSON.parse(readFileSync(join(out, "data.json"), "utf8")) as { path_only_write_weight: number },
      };
    };
    const plain = await write("path-only-0");
    const weighted = await write("path-only-4", 4);
    expect(plain.calls).toEqual([]);
    expect(weighted.calls.length).toBeGreaterThan(5);
    // A mistake: never learned (mask 2 on every token of the call).
    for (const mask of weighted.calls) expect(mask).toMatch(/^2+$/);
    expect(weighted.heldOut).toBe(plain.heldOut);
    expect([plain.manifest.path_only_write_weight, weighted.manifest.path_only_write_weight]).toEqual([0, 4]);
    expect(parseOptions(["--path-only-write-weight", "2"])).toMatchObject({ pathOnlyWriteWeight: 2 });
    expect(parseOptions(["--path-only-write-weight", "1.5"])).toBe("--path-only-write-weight: expected a whole number ≥ 0, got 1.5");
    expect(await refusal(["--work", work, "--path-only-write-weight", "x"])).toEqual({
      status: 2,
      message: expect.stringContaining("--path-only-write-weight: expected a whole number ≥ 0, got x"),
    });
    expect(RECIPE.pathOnlyWriteWeight).toBe("0");
  }, 240_000);

  it("--content-first-writes writes every planned write_file call content first, in both splits, learned as the plan", async () => {
    const write = async (name: string, contentFirstWrites: boolean) => {
      const out = join(work, name);
      await writeTrainingData({ out, episodes: 20, heldOut: 20, samplesPerSeed: 10, errorRate: 0.2, seed: 0, ...(contentFirstWrites ? { contentFirstWrites } : {}) }, () => undefined);
      const workspaceOf = (split: string) =>
        readFileSync(join(out, `${split}.jsonl`), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { env: string; ids: number[]; mask: string }).filter((e) => e.env === "workspace");
      // Byte-level ids: each learned span (mask 1) as text, and the order of its write_file call's arguments.
      const orders = (split: string) =>
        workspaceOf(split).flatMap((e) =>
          [...e.mask.matchAll(/1+/g)]
            .map((m) => String.fromCharCode(...e.ids.slice(m.index, m.index + m[0].length)))
            .filter((text) => text.includes('"name": "write_file"'))
            .map((text) => (text.indexOf('"content":') < text.indexOf('"path":') ? "content first" : "path first")),
        );
      const manifest = JSON.parse(readFileSync(join(out, "data.json"), "utf8")) as { content_first_writes: boolean };
      return { train: orders("train"), heldOut: orders("held_out"), flag: manifest.content_first_writes };
    };
    const lab = await write("content-first-no", false);
    const reordered = await write("content-first-yes", true);
    for (const split of ["train", "heldOut"] as const) {
      expect(lab[split].length, split).toBeGreaterThan(0);
      expect(new Set(lab[split]), split).toEqual(new Set(["path first"]));
      expect(reordered[split].length, split).toBe(lab[split].length);
      expect(new Set(reordered[split]), split).toEqual(new Set(["content first"]));
    }
    expect([lab.flag, reordered.flag]).toEqual([false, true]);
    expect(parseOptions(["--content-first-writes"])).toMatchObject({ contentFirstWrites: true });
    expect(parseOptions([])).not.toHaveProperty("contentFirstWrites");
    expect(RECIPE.contentFirstWrites).toBe(false);
  }, 240_000);

  it("--not-found-thoughts is an option of train:data and train:model, off in the recipe, and recorded in data.json", async () => {
    expect(parseOptions(["--not-found-thoughts"])).toMatchObject({ notFoundThoughts: true });
    expect(parseOptions([])).not.toHaveProperty("notFoundThoughts");
    expect(RECIPE.notFoundThoughts).toBe(false);
    const out = join(work, "not-found-thoughts");
    await writeTrainingData({ out, episodes: 10, heldOut: 0, samplesPerSeed: 10, errorRate: 0.2, seed: 0, notFoundThoughts: true }, () => undefined);
    expect(JSON.parse(readFileSync(join(out, "data.json"), "utf8"))).toMatchObject({ not_found_thoughts: true });
  }, 240_000);

  it("train:model learns --merges first unless given a --vocabulary, and refuses both, or a count below 0, exit status 2", async () => {
    expect(RECIPE.merges).toBe("1024"); // builtin:trained's own vocabulary
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      expect(await main(["--work", work, "--merges=-1"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--merges: expected an integer ≥ 0, got -1");
      expect(await main(["--work", work, "--merges", "10", "--vocabulary", vocabularyFile])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--merges: give it or --vocabulary, not both");
      expect(await main(["--work", work, "--vocabulary", join(work, "none.json")])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toMatch(/--vocabulary: .*none\.json does not exist/);
    } finally {
      errors.mockRestore();
    }
  });

  it("refuses a learner that speaks another vocabulary, and a vocabulary file that is not one, exit status 2", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      expect(await trainData(["--out", join(work, "v2"), "--episodes", "10", "--held-out", "0", "--learner", "builtin:tiny", "--vocabulary", vocabularyFile])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--learner builtin:tiny: it speaks the byte-level vocabulary, the data 3 merges");
      expect(await trainData(["--out", join(work, "v3"), "--vocabulary", join(work, "missing.json")])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toMatch(/--vocabulary: .*missing\.json does not exist/);
      writeFileSync(join(work, "bad.json"), JSON.stringify({ format: VOCABULARY_FORMAT, merges: [["dif", "f"]] }));
      expect(await trainData(["--out", join(work, "v4"), "--vocabulary", join(work, "bad.json")])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain(`merges[0]: "dif" is neither a byte nor an earlier merge's token`);
    } finally {
      errors.mockRestore();
    }
  }, 120_000);
});

describe("train:data's learner (--learner, --learner-rate)", () => {
  it("refuses a rate outside (0, 1] or without a learner, naming the option", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      expect(await trainData(["--out", work, "--learner-rate", "0.5"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--learner-rate: needs --learner <model>");
      expect(await trainData(["--out", work, "--learner", "builtin:trained", "--learner-rate", "1.5"])).toBe(2);
      expect(errors.mock.calls.at(-1)![0]).toContain("--learner-rate: expected a number in (0, 1], got 1.5");
      expect(await trainData(["--out", work, "--learner", "builtin:trained", "--learner-rate=0"])).toBe(2);
    } finally {
      errors.mockRestore();
    }
  });
});
