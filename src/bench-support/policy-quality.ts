/**
 * The policy-quality benchmark (`npm run bench:policy-quality`): a model policy (by default `builtin:trained`)
 * against two baselines on the same held-out samples, in one run: the oracle (error rate 0; the caller passes its
 * solvers, the number-guess one included) and a uniformly random well-formed action (src/policy/random-action/).
 * Per environment plan it reports the share of well-formed actions, the solve rate, the mean total reward and the
 * mean turns, and the targets as pass/fail flags (reported, never asserted).
 *
 * The plans, their scenarios and the held-out seeds come from the caller (src/training/plan.ts, which this layer may
 * not import). Each plan's samples are generated once, from `ceil(samples / samplesPerSeed)` held-out dataset seeds,
 * and every policy runs that same list of samples (a scenario with `samples`, not `dataset`).
 *
 * Well-formed is judged per assistant turn by src/scenario/turn-verdicts.ts (`judgeTurns`).
 */

import { byteLevelTokenizer, isThinkingType } from "../core/index.js";
import type { EnvironmentLookup } from "../envs/index.js";
import { oraclePolicy, type OracleSolver } from "../policy/oracle/index.js";
import { randomActionPolicy } from "../policy/random-action/index.js";
import type { RolloutResultJson } from "../scenario/result.js";
import { prepareScenario, rendersOwnTemplate, runScenario, type LoadedPolicy, type RunScenarioOptions } from "../scenario/run.js";
import { parseScenario, type Scenario } from "../scenario/schema.js";
import { judgeTurns, type TurnVerdict } from "../scenario/turn-verdicts.js";

export const POLICIES = ["model", "model_sampled", "oracle", "random"] as const;
export type PolicyName = (typeof POLICIES)[number];
/** The model, greedy; and the model as the lab's default run samples it (`LAB_SAMPLING`). */
export const MODEL_POLICIES = ["model", "model_sampled"] as const;
type ModelPolicyName = (typeof MODEL_POLICIES)[number];
const isModelPolicy = (p: PolicyName): p is ModelPolicyName => (MODEL_POLICIES as readonly string[]).includes(p);

/** How `model_sampled` samples: the model policy's sampling fields (spec/scenario-format.md), seeded. */
export interface Sampling {
  temperature: number;
  top_k: number;
  top_p: number;
  seed: number;
}

/** The lab's default sampling (src/app/setup/setup.ts's DEFAULT_SETUP), seeded: `model_sampled` runs with it unless told otherwise. */
export const LAB_SAMPLING: Readonly<Sampling> = { temperature: 1, top_k: 0, top_p: 0.95, seed: 0 };

/** What the benchmark reads of an environment plan (src/training/plan.ts's `EnvironmentPlan`). */
export interface QualityPlan {
  name: string;
  /** The environment's `name`: picks the judge. */
  env: string;
  datasetConfig?: Record<string, unknown>;
}

/**
 * Plans measured on more samples than the rest by default. The workspace's well-formed share is judged against 95%
 * and sat within two points of it for every recipe tried: at 40 samples (~135 judged turns) its 95% interval is about
 * ±4 points, at 200 (~670 turns) about ±1.7, at 400 (~1,340) about ±1.2: 400, since candidate weights chosen on the
 * first 200 read lower on the next 200 (docs/training.md, section 7, "Session 27"). Only the workspace can grow so:
 * each task is a file tree drawn anew, so held-out seeds past the six whose tasks `train:data` keeps out of training
 * still share no task with it (checked for 40 seeds: none of 400), while the calculator's and the shuffled puzzle's
 * would.
 */
export const DEFAULT_PLAN_SAMPLES: Readonly<Record<string, number>> = { workspace: 400 };

/** The plans the targets name. */
export const PUZZLE_PLAN = "sliding_puzzle";
export const CALCULATOR_PLAN = "calculator";

/**
 * The model's `max_new_tokens` per turn, by environment: room for the longest reply the trained model was taught
 * (measured on 200 held-out samples: calculator 33 tokens, number guess 17; the puzzle ~95, a 3×3 board written
 * out in the think block; the workspace 353, a config file rewritten whole after its think block), so none is cut.
 */
export const MODEL_MAX_NEW_TOKENS: Readonly<Record<string, number>> = { sliding_puzzle: 128, workspace: 384 };
export const DEFAULT_MODEL_MAX_NEW_TOKENS = 48;

export interface PolicyQualityOptions<P extends QualityPlan = QualityPlan> {
  plans: readonly P[];
  /** The scenario (an object for `parseScenario`) of one plan, dataset seed and size: `planScenario`. */
  scenarioFor: (plan: P, datasetSeed: number, size: number) => Record<string, unknown>;
  /** The first `count` held-out dataset seeds: `splitSeeds("held_out", count)`. */
  heldOutSeeds: (count: number) => number[];
  /** Samples per plan, and per dataset seed. */
  samples: number;
  samplesPerSeed: number;
  /** Plans that take another number of samples than `samples`, by plan name (`DEFAULT_PLAN_SAMPLES`). */
  planSamples?: Readonly<Record<string, number>>;
  /** The model policy's model id, or null to run the baselines alone. */
  model: string | null;
  /** Loads a model policy (Node: `nodeRunOptions(...).modelPolicy`, as `npm run rollout` does). */
  modelPolicy?: RunScenarioOptions["modelPolicy"];
  /** The oracle's solvers, one per environment (`TRAINING_SOLVERS`: the built-in oracles and the number-guess one). */
  oracleSolvers: readonly OracleSolver[];
  randomSeed: number;
  environments: EnvironmentLookup;
  /** The model's `max_new_tokens` for every plan, instead of `MODEL_MAX_NEW_TOKENS`. */
  modelMaxNewTokens?: number;
  /** Which policies to run (all by default; the model only when `model` is given). */
  policies?: readonly PolicyName[];
  /** How `model_sampled` samples (`LAB_SAMPLING` by default): other settings measure what they would change. */
  sampling?: Readonly<Sampling>;
  log?: (line: string) => void;
  clock?: () => number;
  /** Each policy's run of each plan as it finishes, awaited (the benchmark's `--transcripts` writes them out). */
  onResult?: (plan: string, policy: PolicyName, result: RolloutResultJson) => void | Promise<void>;
}

export interface PolicyStats {
  samples: number;
  /** Samples that ended in an error (counted as unsolved). */
  errors: number;
  turns: number;
  judged_turns: number;
  well_formed_turns: number;
  /** Well-formed over judged turns; null when no turn was judged. */
  well_formed_rate: number | null;
  /**
   * The well-formed share's 95% interval (Wilson score over judged turns), [low, high]. Turns of one sample are not
   * independent draws, so the true spread is somewhat wider than this.
   */
  well_formed_rate_ci95: [number, number];
  /** Samples with a total reward > 0. */
  solve_rate: number;
  /**
   * The solve rate's 95% interval (Wilson score), [low, high]: what a rerun on other samples of the same quality could
   * read. At 40 samples it is ±15 points around 50%, so two recipes whose intervals overlap widely are not told apart.
   */
  solve_rate_ci95: [number, number];
  mean_total_reward: number;
  mean_turns: number;
  /** Samples whose last response was cut at `max_new_tokens`. */
  truncated_rate: number;
  /**
   * Judged turns that follow a malformed judged turn of the same sample (the environment's or the penalty's error in
   * their context), and the share of them well-formed: whether the policy recovers from a slip or repeats it. A policy
   * that repeats its slips has most of its malformed turns here; null when no turn followed a malformed one.
   */
  after_malformed_turns: number;
  after_malformed_well_formed_rate: number | null;
  /** Judged turns with a malformed think block; null where the run made no assessment. */
  malformed_thinking_rate: number | null;
  longest_reply_tokens: number;
  terminations: Record<string, number>;
  /** The first few malformed replies (shortened), to see what went wrong. */
  malformed_examples: string[];
  wall_ms: number;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
export const round = (x: number, digits = 4) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The Wilson score interval at 95% for `successes` of `n` (the normal one fails at 0% and 100%); [0, 1] for n = 0. */
export function wilsonInterval(successes: number, n: number): [number, number] {
  if (n === 0) return [0, 1];
  const z = 1.959964;
  const p = successes / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return [round(Math.max(0, centre - half)), round(Math.min(1, centre + half))];
}

/** The statistics of one policy's run of one plan. */
export function policyStats(env: string, result: RolloutResultJson, wallMs: number): PolicyStats {
  let turns = 0;
  let judged = 0;
  let wellFormed = 0;
  let thinking = 0;
  let longest = 0;
  let assessedAny = false;
  let afterMalformed = 0;
  let recovered = 0;
  const examples: string[] = [];
  const terminations: Record<string, number> = {};
  for (const sample of result.samples) {
    terminations[sample.termination] = (terminations[sample.termination] ?? 0) + 1;
    const verdicts = judgeTurns(env, sample);
    const assistants = sample.message_log.filter((m) => m.role === "assistant");
    assessedAny ||= sample.invalid_action_count !== undefined;
    let previous: TurnVerdict = "unjudged";
    verdicts.forEach((v, i) => {
      const m = assistants[i]!;
      turns++;
      longest = Math.max(longest, m.token_ids.length);
      if (v === "unjudged") return;
      judged++;
      if (previous === "malformed") {
        afterMalformed++;
        if (v === "well_formed") recovered++;
      }
      previous = v;
      if (v === "well_formed") wellFormed++;
      else if (examples.length < 3) examples.push(m.content.length > 160 ? `${m.content.slice(0, 160)}…` : m.content);
      if ((m.invalid_action_violations ?? []).some((x) => isThinkingType(x.type))) thinking++;
    });
  }
  const n = result.samples.length;
  return {
    samples: n,
    errors: result.samples.filter((s) => s.error !== undefined).length,
    turns,
    judged_turns: judged,
    well_formed_turns: wellFormed,
    well_formed_rate: judged ? round(wellFormed / judged) : null,
    well_formed_rate_ci95: wilsonInterval(wellFormed, judged),
    solve_rate: round(mean(result.samples.map((s) => Number(s.total_reward > 0)))),
    solve_rate_ci95: wilsonInterval(result.samples.filter((s) => s.total_reward > 0).length, n),
    mean_total_reward: round(mean(result.samples.map((s) => s.total_reward))),
    mean_turns: round(n ? turns / n : 0, 2),
    truncated_rate: round(mean(result.samples.map((s) => Number(s.truncated)))),
    after_malformed_turns: afterMalformed,
    after_malformed_well_formed_rate: afterMalformed ? round(recovered / afterMalformed) : null,
    malformed_thinking_rate: assessedAny && judged ? round(thinking / judged) : null,
    longest_reply_tokens: longest,
    terminations,
    malformed_examples: examples,
    wall_ms: Math.round(wallMs),
  };
}

export interface TargetFlag {
  id: string;
  description: string;
  /** A target the model should meet, or one it is aimed at (reported alike). */
  kind: "target" | "aim";
  value: number | null;
  threshold: number | null;
  pass: boolean;
}

/**
 * The targets, from the plan reports (a model policy's against the baselines'): the greedy model's (`model`), or
 * the sampled one's (`model_sampled`: ids prefixed `sampled/`, descriptions say "model (sampled)"). A flag whose
 * figures the run did not measure (its plan or its baseline left out with `plans` or `policies`) is left out, not failed.
 */
export function targetFlags(plans: readonly PlanReport[], policy: ModelPolicyName = "model"): TargetFlag[] {
  const stats = (plan: string, name: PolicyName) => plans.find((p) => p.plan === plan)?.policies[name];
  const id = (name: string) => (policy === "model" ? name : `sampled/${name}`);
  const who = policy === "model" ? "model" : "model (sampled)";
  const flags: TargetFlag[] = [];
  const rates = plans.filter((p) => p.policies[policy]).map((p) => ({ plan: p.plan, rate: p.policies[policy]!.well_formed_rate }));
  if (rates.length === 0) return flags;
  for (const { plan, rate } of rates) {
    flags.push({ id: id(`well_formed/${plan}`), description: `${who}: well-formed actions ≥ 95% on ${plan}`, kind: "target", value: rate, threshold: 0.95, pass: rate !== null && rate >= 0.95 });
  }
  flags.push({
    id: id("well_formed/every_env"),
    description: `${who}: well-formed actions ≥ 95% on every environment`,
    kind: "target",
    value: rates.every((r) => r.rate !== null) ? Math.min(...rates.map((r) => r.rate!)) : null,
    threshold: 0.95,
    pass: rates.every((r) => r.rate !== null && r.rate >= 0.95),
  });
  const model = stats(PUZZLE_PLAN, policy)?.solve_rate ?? null;
  const random = stats(PUZZLE_PLAN, "random")?.solve_rate ?? null;
  const oracle = stats(PUZZLE_PLAN, "oracle")?.solve_rate ?? null;
  // No ratio over a baseline that solved nothing (JSON has no infinity); `pass` still says whether the model did better.
  const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : round(a / b, 3));
  if (model !== null && random !== null) flags.push({
    id: id("puzzle_solve/vs_random"),
    description: `${who}: ${PUZZLE_PLAN} solve rate ≥ 1.5 × the random-action policy's (value: model ÷ random)`,
    kind: "target",
    value: ratio(model, random),
    threshold: 1.5,
    pass: model !== null && random !== null && model > 0 && model >= 1.5 * random,
  });
  if (model !== null && oracle !== null) flags.push({
    id: id("puzzle_solve/vs_oracle"),
    description: `${who}: ${PUZZLE_PLAN} solve rate ≥ 0.6 × the oracle's (value: model ÷ oracle)`,
    kind: "aim",
    value: ratio(model, oracle),
    threshold: 0.6,
    pass: model !== null && oracle !== null && oracle > 0 && model >= 0.6 * oracle,
  });
  const calculator = stats(CALCULATOR_PLAN, policy)?.solve_rate ?? null;
  if (calculator !== null) flags.push({
    id: id("calculator/correct_final_answers"),
    description: `${who}: correct final answers on ${CALCULATOR_PLAN} ≥ 25%`,
    kind: "aim",
    value: calculator,
    threshold: 0.25,
    pass: calculator !== null && calculator >= 0.25,
  });
  return flags;
}

export interface PlanReport {
  plan: string;
  env: string;
  dataset_config: Record<string, unknown>;
  dataset_seeds: number[];
  samples: number;
  model_max_new_tokens: number;
  /** The oracle's longest reply here, and whether the model's budget holds it. */
  oracle_longest_reply_tokens: number | null;
  model_budget_fits_oracle: boolean | null;
  policies: Partial<Record<PolicyName, PolicyStats>>;
}

export interface PolicyQualityResult {
  benchmark: "policy-quality";
  model: string | null;
  /** `model` is greedy; `model_sampled` samples with `sampling` (the lab's default run's settings unless the run named others). */
  config: { samples_per_plan: number; plan_samples: Record<string, number>; samples_per_seed: number; random_seed: number; greedy: true; sampling: Sampling; policies: PolicyName[] };
  plans: PlanReport[];
  targets: TargetFlag[];
  /** Each policy's wall time over every plan (its rollouts only; the samples are generated once, before). */
  wall_ms: Partial<Record<PolicyName, number>>;
}

/** How many samples each dataset seed gives: `samplesPerSeed` each, the last one the rest. */
export function seedSizes(samples: number, samplesPerSeed: number): number[] {
  if (!Number.isInteger(samples) || samples < 1) throw new RangeError(`samples: expected a positive integer, got ${samples}`);
  if (!Number.isInteger(samplesPerSeed) || samplesPerSeed < 1) throw new RangeError(`samples per seed: expected a positive integer, got ${samplesPerSeed}`);
  const sizes: number[] = [];
  for (let left = samples; left > 0; left -= samplesPerSeed) sizes.push(Math.min(samplesPerSeed, left));
  return sizes;
}

/**
 * One scenario holding a plan's samples from every seed (generated as each seed's dataset would be), so that each
 * policy runs the very same samples. `idx` is the position in the list.
 */
export async function heldOutScenario<P extends QualityPlan>(
  plan: P,
  options: Pick<PolicyQualityOptions<P>, "scenarioFor" | "heldOutSeeds" | "samples" | "samplesPerSeed" | "planSamples" | "environments">,
): Promise<{ scenario: Record<string, unknown>; seeds: number[] }> {
  const sizes = seedSizes(samplesOf(plan, options), options.samplesPerSeed);
  const seeds = options.heldOutSeeds(sizes.length);
  let base: Record<string, unknown> | null = null;
  const samples: unknown[] = [];
  for (const [i, size] of sizes.entries()) {
    const raw = options.scenarioFor(plan, seeds[i]!, size);
    base ??= raw;
    const { data } = await prepareScenario(parseScenario(raw), options.environments);
    for (const d of data) samples.push({ ...d, idx: samples.length });
  }
  const { dataset: _dataset, ...rest } = base!;
  // A JSON copy: generated data may share objects, and holds no undefined once in a scenario.
  return { scenario: JSON.parse(JSON.stringify({ ...rest, samples })) as Record<string, unknown>, seeds };
}

/** How many samples a plan takes: its own number in `planSamples`, else `samples`. */
export const samplesOf = (plan: QualityPlan, options: Pick<PolicyQualityOptions, "samples" | "planSamples">): number =>
  options.planSamples?.[plan.name] ?? options.samples;

/** A model loader that refuses a model with its own chat template: these prompts are the built-in ChatML ones. */
function byteLevelOnly(load: NonNullable<RunScenarioOptions["modelPolicy"]>): NonNullable<RunScenarioOptions["modelPolicy"]> {
  return async (spec) => {
    const loaded: LoadedPolicy = await load(spec);
    if (rendersOwnTemplate(loaded.tokenizer)) {
      await loaded.dispose?.();
      throw new Error(`policy-quality: '${spec.model}' has a tokenizer of its own; the benchmark's prompts are rendered for the lab's byte-level vocabulary (builtin:trained, builtin:tiny, builtin:small)`);
    }
    return loaded;
  };
}

export async function runPolicyQuality<P extends QualityPlan>(options: PolicyQualityOptions<P>): Promise<PolicyQualityResult> {
  const clock = options.clock ?? (() => performance.now());
  const log = options.log ?? (() => {});
  const wanted = options.policies ?? POLICIES;
  const policies = POLICIES.filter((p) => wanted.includes(p) && (!isModelPolicy(p) || options.model !== null));
  if (policies.some(isModelPolicy) && !options.modelPolicy) throw new Error("policy-quality: a model is named but no model loader was given (modelPolicy)");
  const wall: Partial<Record<PolicyName, number>> = {};
  const plans: PlanReport[] = [];

  for (const plan of options.plans) {
    const { scenario: raw, seeds } = await heldOutScenario(plan, options);
    const budget = options.modelMaxNewTokens ?? MODEL_MAX_NEW_TOKENS[plan.env] ?? DEFAULT_MODEL_MAX_NEW_TOKENS;
    const report: PlanReport = {
      plan: plan.name,
      env: plan.env,
      dataset_config: plan.datasetConfig ?? {},
      dataset_seeds: seeds,
      samples: samplesOf(plan, options),
      model_max_new_tokens: budget,
      oracle_longest_reply_tokens: null,
      model_budget_fits_oracle: null,
      policies: {},
    };
    for (const policy of policies) {
      const started = clock();
      const result = await runOne(policy, raw, budget, options);
      const ms = clock() - started;
      wall[policy] = (wall[policy] ?? 0) + ms;
      await options.onResult?.(plan.name, policy, result);
      const stats = policyStats(plan.env, result, ms);
      report.policies[policy] = stats;
      log(`${plan.name.padEnd(24)} ${policy.padEnd(13)} ${stats.samples} samples in ${(ms / 1000).toFixed(1)} s`);
    }
    const oracle = report.policies.oracle;
    if (oracle) {
      report.oracle_longest_reply_tokens = oracle.longest_reply_tokens;
      report.model_budget_fits_oracle = oracle.longest_reply_tokens <= budget;
    }
    plans.push(report);
  }

  for (const p of policies) wall[p] = Math.round(wall[p] ?? 0);
  return {
    benchmark: "policy-quality",
    model: policies.some(isModelPolicy) ? options.model : null,
    config: { samples_per_plan: options.samples, plan_samples: { ...options.planSamples }, samples_per_seed: options.samplesPerSeed, random_seed: options.randomSeed, greedy: true, sampling: { ...(options.sampling ?? LAB_SAMPLING) }, policies },
    plans,
    targets: MODEL_POLICIES.filter((p) => policies.includes(p)).flatMap((p) => targetFlags(plans, p)),
    wall_ms: wall,
  };
}

/** One policy's rollout of a plan's samples: the model through the scenario, the baselines as text policies. */
async function runOne(
  policy: PolicyName,
  raw: Record<string, unknown>,
  budget: number,
  options: Pick<PolicyQualityOptions, "environments" | "model" | "modelPolicy" | "oracleSolvers" | "randomSeed" | "sampling">,
): Promise<RolloutResultJson> {
  const environments = options.environments;
  if (isModelPolicy(policy)) {
    const sampling = policy === "model" ? { greedy: true } : { greedy: false };
    const model = { kind: "model", model: options.model, ...(policy === "model_sampled" ? (options.sampling ?? LAB_SAMPLING) : {}) };
    const scenario: Scenario = parseScenario({ ...raw, ...sampling, max_new_tokens: budget, policy: model });
    return runScenario(scenario, { environments, modelPolicy: byteLevelOnly(options.modelPolicy!) });
  }
  const scenario = parseScenario({ ...raw, policy: { kind: "oracle", seed: 0, error_rate: 0 } });
  const generation =
    policy === "oracle"
      ? oraclePolicy(byteLevelTokenizer, { seed: 0, errorRate: 0, solvers: options.oracleSolvers })
      : randomActionPolicy(byteLevelTokenizer, { seed: options.randomSeed });
  return runScenario(scenario, { environments, policyOverride: { generation, tokenizer: byteLevelTokenizer } });
}

const pct = (x: number | null) => (x === null ? "–" : `${(100 * x).toFixed(1)}%`);
const interval = ([low, high]: [number, number], digits = 0) => `${(100 * low).toFixed(digits)}–${(100 * high).toFixed(digits)}`;

/** The well-formed share of the turns after a malformed one, and their count ("–" where none). */
const afterSlip = (s: PolicyStats) => (s.after_malformed_turns ? `${pct(s.after_malformed_well_formed_rate)} of ${s.after_malformed_turns}` : "–");

/** The console table: one row per plan × policy, then the target flags. */
/** The sampled policy's settings, and whether they are the lab's default run's. */
export function describeSampling(s: Sampling): string {
  const lab = (Object.keys(LAB_SAMPLING) as (keyof Sampling)[]).every((k) => s[k] === LAB_SAMPLING[k]);
  return `temperature ${s.temperature}, top-k ${s.top_k || "off"}, top-p ${s.top_p}, seed ${s.seed} (${lab ? "the lab's default run's" : "not the lab's default"})`;
}

export function formatPolicyQuality(result: PolicyQualityResult): string {
  const header = ["plan", "policy", "samples", "well-formed", "95% interval", "after a slip", "solved", "95% interval", "mean reward", "mean turns", "errors", "time"];
  const rows = result.plans.flatMap((p) =>
    POLICIES.filter((name) => p.policies[name]).map((name) => {
      const s = p.policies[name]!;
      return [p.plan, name, String(s.samples), pct(s.well_formed_rate), s.judged_turns ? interval(s.well_formed_rate_ci95, 1) : "–", afterSlip(s), pct(s.solve_rate), interval(s.solve_rate_ci95), s.mean_total_reward.toFixed(3), s.mean_turns.toFixed(2), String(s.errors), `${(s.wall_ms / 1000).toFixed(1)} s`];
    }),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const out = [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)];
  if (result.config.policies.includes("model_sampled")) out.push(`model_sampled: ${describeSampling(result.config.sampling)}`);
  const unfit = result.plans.filter((p) => p.model_budget_fits_oracle === false);
  for (const p of unfit) out.push(`note: ${p.plan}: the oracle's longest reply (${p.oracle_longest_reply_tokens} tokens) exceeds the model's max_new_tokens (${p.model_max_new_tokens})`);
  if (result.targets.length) {
    out.push("", "targets (reported, not asserted):");
    for (const t of result.targets) {
      const value = t.value === null ? "–" : String(t.value);
      out.push(`  [${t.pass ? "PASS" : "FAIL"}] ${t.kind === "aim" ? "(aim) " : ""}${t.description}: ${value}`);
    }
  }
  out.push("", `wall time: ${POLICIES.filter((p) => result.wall_ms[p] !== undefined).map((p) => `${p} ${(result.wall_ms[p]! / 1000).toFixed(1)} s`).join(", ")}`);
  return out.join("\n");
}
