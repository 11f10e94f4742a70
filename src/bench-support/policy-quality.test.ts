import { describe, expect, it } from "vitest";
import { byteLevelTokenizer } from "../core/index.js";
import { environmentLookup } from "../envs/index.js";
import { loadCheckoutEnvironments } from "../cli/checkout-environments.js";
import { oraclePolicy } from "../policy/oracle/index.js";
import { runScenario } from "../scenario/run.js";
import { parseScenario } from "../scenario/schema.js";
import { judgeTurns } from "../scenario/turn-verdicts.js";
import { TRAINING_SOLVERS } from "../training/collect.js";
import { ENVIRONMENT_PLANS, HELD_OUT_SEED_BASE, planScenario, splitSeeds, type EnvironmentPlan } from "../training/plan.js";
import { prepareScenario } from "../scenario/run.js";
import { RECIPE } from "../cli/train-model.js";
import {
  DEFAULT_PLAN_SAMPLES,
  formatPolicyQuality,
  heldOutScenario,
  policyStats,
  runPolicyQuality,
  seedSizes,
  wilsonInterval,
  type PolicyQualityOptions,
} from "./policy-quality.js";

const environments = environmentLookup(await loadCheckoutEnvironments());

const baseOptions: PolicyQualityOptions<EnvironmentPlan> = {
  plans: ENVIRONMENT_PLANS,
  scenarioFor: (plan, seed, size) => planScenario(plan, seed, size, { seed: 0, errorRate: 0 }),
  heldOutSeeds: (count) => splitSeeds("held_out", count),
  samples: 2,
  samplesPerSeed: 10,
  model: null,
  oracleSolvers: TRAINING_SOLVERS,
  randomSeed: 0,
  environments,
};

const planNamed = (name: string) => ENVIRONMENT_PLANS.find((p) => p.name === name)!;

/** One sample of a plan answered by fixed replies (the scripted policy), judged turn by turn. */
async function judgeReplies(planName: string, replies: string[]) {
  const plan = planNamed(planName);
  const raw = planScenario(plan, HELD_OUT_SEED_BASE, 1, { seed: 0, errorRate: 0 });
  const result = await runScenario(parseScenario({ ...raw, policy: { kind: "scripted", responses: [replies] } }), { environments });
  return judgeTurns(plan.env, result.samples[0]!);
}

describe("the policy-quality benchmark", () => {
  it("judges the oracle 100% well-formed and solving, the random-action policy 100% well-formed", async () => {
    const result = await runPolicyQuality(baseOptions);
    expect(result.plans.map((p) => p.plan)).toEqual(ENVIRONMENT_PLANS.map((p) => p.name));
    expect(result.model).toBeNull();
    expect(result.targets).toEqual([]);
    for (const p of result.plans) {
      const oracle = p.policies.oracle!;
      const random = p.policies.random!;
      expect(p.dataset_seeds).toEqual([HELD_OUT_SEED_BASE]);
      expect(oracle.samples, p.plan).toBe(2);
      expect(oracle.errors, p.plan).toBe(0);
      expect(oracle.well_formed_rate, p.plan).toBe(1);
      expect(oracle.solve_rate, p.plan).toBe(1);
      expect(oracle.judged_turns, p.plan).toBeGreaterThan(0);
      expect(random.errors, p.plan).toBe(0);
      expect(random.well_formed_rate, p.plan).toBe(1);
      expect(p.model_budget_fits_oracle, p.plan).toBe(true);
    }
    expect(result.plans.find((p) => p.plan === "workspace")!.policies.oracle!.malformed_thinking_rate).toBe(0);
  });

  it("counts garbage as not well-formed in every environment", async () => {
    const garbage = "uh, hello? ]]}{ <tool";
    for (const plan of ENVIRONMENT_PLANS) {
      const verdicts = await judgeReplies(plan.name, [garbage, garbage]);
      expect(verdicts[0], plan.name).toBe("malformed");
    }
    // Actions the environment cannot read are malformed; a blocked direction is a well-formed move.
    expect(await judgeReplies("sliding_puzzle", ["<action>jump</action>", "<action>slide x y</action>"])).toEqual(["malformed", "malformed"]);
    expect((await judgeReplies("sliding_puzzle", ["<action>slide 9 9</action>"]))[0]).toBe("well_formed");
    expect(await judgeReplies("calculator", ["[1, 2, pow]<call: calculator>"])).toEqual(["malformed"]);
    expect(await judgeReplies("calculator", ["[1, 2, sum]<call: calculator>", "3"])).toEqual(["well_formed", "well_formed"]);
    expect(await judgeReplies("workspace", ['<tool_call>\n{"name": "read_file", "arguments": {"path": 5}}\n</tool_call>'])).toContain("malformed");
    expect((await judgeReplies("number_guess", ["<guess>99</guess>"]))[0]).toBe("well_formed");
  });

  it("leaves turns the environment did not read unjudged", async () => {
    // The default puzzle's 11th turn comes after its 10 moves: the environment no longer reads the action.
    const blocked = Array.from({ length: 11 }, () => "<action>view</action>");
    const verdicts = await judgeReplies("sliding_puzzle", blocked);
    expect(verdicts).toHaveLength(11);
    expect(verdicts.slice(0, 10).every((v) => v === "well_formed")).toBe(true);
    const moves = await judgeReplies("sliding_puzzle", ["<action>up</action>", "<action>down</action>"].flatMap((x) => Array(6).fill(x)));
    expect(moves.at(-1)).toBe("unjudged");
    const log = [{ role: "user", content: "x", token_ids: [] }, { role: "assistant", content: "<guess>3</guess>", token_ids: [] }];
    expect(judgeTurns("number_guess", { message_log: log })).toEqual(["unjudged"]);
    expect(() => judgeTurns("chess", { message_log: log })).toThrow(/no well-formedness judge for environment 'chess'/);
  });

  it("counts the turns after a malformed one and how many of them recover", async () => {
    const plan = planNamed("number_guess");
    const raw = planScenario(plan, HELD_OUT_SEED_BASE, 2, { seed: 0, errorRate: 0 });
    // Sample 1 slips, repeats the slip, then recovers; sample 2 slips once and recovers.
    const responses = [["hm", "hm", "<guess>50</guess>"], ["oops", "<guess>50</guess>"]];
    const result = await runScenario(parseScenario({ ...raw, policy: { kind: "scripted", responses } }), { environments });
    const stats = policyStats(plan.env, result, 0);
    expect(stats.judged_turns).toBe(5);
    expect(stats.well_formed_turns).toBe(2);
    expect(stats.after_malformed_turns).toBe(3);
    expect(stats.after_malformed_well_formed_rate).toBe(0.6667);
    const oracle = await runScenario(parseScenario({ ...raw, policy: { kind: "scripted", responses: [["<guess>50</guess>"], ["<guess>50</guess>"]] } }), { environments });
    expect(policyStats(plan.env, oracle, 0)).toMatchObject({ after_malformed_turns: 0, after_malformed_well_formed_rate: null });
  });

  it("hands each policy's rollout result of each plan to onResult, the same result its figures come from, and awaits it", async () => {
    const seen: [string, string, number][] = [];
    const result = await runPolicyQuality({
      ...baseOptions,
      plans: [planNamed("number_guess"), planNamed("calculator")],
      // A handler that finishes later (a file being written): the benchmark returns only after the last one.
      onResult: async (plan, policy, r) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        seen.push([plan, policy, r.samples.length]);
      },
    });
    expect(seen).toEqual([
      ["number_guess", "oracle", 2],
      ["number_guess", "random", 2],
      ["calculator", "oracle", 2],
      ["calculator", "random", 2],
    ]);
    expect(result.plans.map((p) => p.policies.oracle!.samples)).toEqual([2, 2]);
  });

  it("runs a model through the scenario on the same samples as the baselines, and reports the targets", async () => {
    const loads: string[] = [];
    const result = await runPolicyQuality({
      ...baseOptions,
      plans: ENVIRONMENT_PLANS.filter((p) => p.name === "sliding_puzzle" || p.name === "calculator"),
      model: "builtin:stand-in",
      // A stand-in for the model: the oracle behind the model loader, so its figures must equal the oracle's.
      modelPolicy: async (spec) => {
        loads.push(spec.model);
        return { generation: oraclePolicy(byteLevelTokenizer, { solvers: TRAINING_SOLVERS }), tokenizer: byteLevelTokenizer };
      },
    });
    // Greedy, then sampled as the lab's default run samples, on each plan.
    expect(loads).toEqual(["builtin:stand-in", "builtin:stand-in", "builtin:stand-in", "builtin:stand-in"]);
    expect(result.config.sampling).toEqual({ temperature: 1, top_k: 0, top_p: 0.95, seed: 0 });
    for (const p of result.plans) {
      const { wall_ms: _b, ...oracle } = p.policies.oracle!;
      for (const name of ["model", "model_sampled"] as const) {
        const { wall_ms: _a, ...model } = p.policies[name]!;
        expect(model, `${p.plan} ${name}`).toEqual(oracle);
      }
      // Room for the board the puzzle's moves think aloud; the default elsewhere.
      expect(p.model_max_new_tokens).toBe(p.env === "sliding_puzzle" ? 128 : 48);
    }
    const flags = Object.fromEntries(result.targets.map((t) => [t.id, t]));
    expect(flags["well_formed/every_env"]!.pass).toBe(true);
    expect(flags["puzzle_solve/vs_oracle"]).toMatchObject({ value: 1, pass: true });
    expect(flags["calculator/correct_final_answers"]).toMatchObject({ value: 1, pass: true });
    expect(flags["sampled/puzzle_solve/vs_oracle"]).toMatchObject({ value: 1, pass: true });
    expect(flags["sampled/well_formed/every_env"]!.description).toBe("model (sampled): well-formed actions ≥ 95% on every environment");
    const table = formatPolicyQuality(result);
    // 2 of 2 solved: the interval says how little two samples tell.
    expect(table).toMatch(/sliding_puzzle\s+model\s+2\s+100\.0%\s+\d+\.\d–100\.0\s+–\s+100\.0%\s+34–100\s/);
    expect(table).toContain("[PASS] (aim) model: correct final answers on calculator ≥ 25%: 1");
  });

  it("samples model_sampled with the settings it is given, greedy stays greedy, and says which they are", async () => {
    const specs: Record<string, unknown>[] = [];
    const sampling = { temperature: 0.7, top_k: 20, top_p: 0.8, seed: 3 };
    const result = await runPolicyQuality({
      ...baseOptions,
      plans: ENVIRONMENT_PLANS.filter((p) => p.name === "calculator"),
      model: "builtin:stand-in",
      policies: ["model", "model_sampled"],
      sampling,
      modelPolicy: async (spec) => {
        specs.push({ ...spec });
        return { generation: oraclePolicy(byteLevelTokenizer, { solvers: TRAINING_SOLVERS }), tokenizer: byteLevelTokenizer };
      },
    });
    expect(specs).toHaveLength(2);
    expect(specs[0]).not.toHaveProperty("temperature");
    expect(specs[1]).toMatchObject(sampling);
    expect(result.config.sampling).toEqual(sampling);
    expect(result.config.policies).toEqual(["model", "model_sampled"]);
    expect(formatPolicyQuality(result)).toContain("model_sampled: temperature 0.7, top-k 20, top-p 0.8, seed 3 (not the lab's default)");
    // Only the calculator ran, without the baselines: the puzzle's flags are left out, not failed.
    expect(result.targets.map((t) => t.id)).toEqual([
      "well_formed/calculator",
      "well_formed/every_env",
      "calculator/correct_final_answers",
      "sampled/well_formed/calculator",
      "sampled/well_formed/every_env",
      "sampled/calculator/correct_final_answers",
    ]);
    const lab = await runPolicyQuality({ ...baseOptions, plans: ENVIRONMENT_PLANS.filter((p) => p.name === "calculator"), model: "builtin:stand-in", policies: ["model_sampled"], modelPolicy: async () => ({ generation: oraclePolicy(byteLevelTokenizer, { solvers: TRAINING_SOLVERS }), tokenizer: byteLevelTokenizer }) });
    expect(formatPolicyQuality(lab)).toContain("model_sampled: temperature 1, top-k off, top-p 0.95, seed 0 (the lab's default run's)");
  });

  it("gives each solve rate its 95% Wilson interval, which stays within [0, 1] at 0% and 100%", () => {
    // Known values: 21 of 40 (the committed model's greedy puzzle solves) reads 37.5–67.1%.
    expect(wilsonInterval(21, 40)).toEqual([0.375, 0.6706]);
    expect(wilsonInterval(11, 40)).toEqual([0.1611, 0.4283]);
    expect(wilsonInterval(0, 40)).toEqual([0, 0.0876]);
    expect(wilsonInterval(40, 40)).toEqual([0.9124, 1]);
    expect(wilsonInterval(0, 0)).toEqual([0, 1]);
  });

  it("splits the samples over held-out seeds, one scenario for every policy", async () => {
    expect(seedSizes(40, 10)).toEqual([10, 10, 10, 10]);
    expect(seedSizes(3, 2)).toEqual([2, 1]);
    expect(() => seedSizes(0, 10)).toThrow(/samples: expected a positive integer/);
    const { scenario, seeds } = await heldOutScenario(planNamed("calculator"), { ...baseOptions, samples: 3, samplesPerSeed: 2 });
    expect(seeds).toEqual([HELD_OUT_SEED_BASE, HELD_OUT_SEED_BASE + 1]);
    const samples = scenario.samples as { idx: number }[];
    expect(samples.map((s) => s.idx)).toEqual([0, 1, 2]);
    expect(scenario.dataset).toBeUndefined();
    expect(() => parseScenario({ ...scenario, policy: { kind: "oracle" } })).not.toThrow();
  });

  it("gives a plan its own number of samples, on more held-out seeds, and each well-formed share its interval", async () => {
    const plans = ["calculator", "number_guess"].map(planNamed);
    const result = await runPolicyQuality({ ...baseOptions, plans, samples: 2, samplesPerSeed: 2, planSamples: { number_guess: 3 }, policies: ["oracle"] });
    const [calculator, guess] = result.plans;
    expect(calculator!.samples).toBe(2);
    expect(calculator!.dataset_seeds).toEqual([HELD_OUT_SEED_BASE]);
    expect(guess!.samples).toBe(3);
    expect(guess!.dataset_seeds).toEqual([HELD_OUT_SEED_BASE, HELD_OUT_SEED_BASE + 1]);
    expect(guess!.policies.oracle!.samples).toBe(3);
    expect(result.config.plan_samples).toEqual({ number_guess: 3 });
    const oracle = guess!.policies.oracle!;
    expect(oracle.well_formed_rate).toBe(1);
    expect(oracle.well_formed_rate_ci95).toEqual(wilsonInterval(oracle.judged_turns, oracle.judged_turns));
    expect(oracle.well_formed_rate_ci95[0]).toBeLessThan(1);
    expect(formatPolicyQuality(result)).toContain(`${(100 * oracle.well_formed_rate_ci95[0]).toFixed(1)}–100.0`);
  });

  it("measures the workspace on more held-out seeds only where none of their tasks is a training task", async () => {
    // The recipe's first stage collects the workspace's training split from 1,200 episodes × its scale, 10 per seed.
    const scale = Number(/workspace=(\d+)/.exec(RECIPE.scale)?.[1] ?? 1);
    const plan = planNamed("workspace");
    const tasks = async (seeds: number[]) => {
      const out = new Set<string>();
      for (const seed of seeds) {
        const { data } = await prepareScenario(parseScenario(planScenario(plan, seed, 10, { seed: 0, errorRate: 0 })), environments);
        for (const d of data) out.add(JSON.stringify([d.message_log ?? d.messages, d.extra_env_info ?? null]));
      }
      return out;
    };
    const training = await tasks(splitSeeds("train", (1200 * scale) / 10));
    const heldOut = await tasks(splitSeeds("held_out", Math.ceil(DEFAULT_PLAN_SAMPLES.workspace! / 10)));
    expect(heldOut.size).toBe(DEFAULT_PLAN_SAMPLES.workspace);
    expect([...heldOut].filter((t) => training.has(t))).toEqual([]);
    expect(Object.keys(DEFAULT_PLAN_SAMPLES)).toEqual(["workspace"]);
  }, 60_000);
});
