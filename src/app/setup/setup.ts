/**
 * The run set-up form's values and the scenario they make. The scenario (shown in the JSON editor) is what runs;
 * the form is a convenient way to write one, and `setupFromScenario` its way of reading one back.
 */

import equal from "fast-deep-equal";
import { parseScenario, type Scenario } from "../../scenario/schema.js";

/** The built-in games and tools the form has settings for. */
export type BuiltinEnvName = "sliding_puzzle" | "calculator" | "workspace";
/** A built-in environment, `http` (a remote one), or the name of a user's environment module. */
export type EnvName = string;
export type PolicyKind = "model" | "oracle" | "scripted" | "replay" | "human";

export interface Setup {
  env: EnvName;
  /** A remote environment's server (`env` = `http`). */
  remoteUrl: string;
  /** The task name for a remote or user environment (its default task name once known). */
  customTaskName: string;
  /** The dataset settings of a remote or user environment, as JSON text. */
  customDatasetConfig: string;
  puzzle: { size: number; shuffle_moves: number; max_moves: number };
  calculator: { steps: number; max_operand: number };
  workspace: { structured_tools: boolean; max_turns: number };
  datasetSize: number;
  datasetSeed: number;
  policy: PolicyKind;
  model: string;
  /**
   * The scenario's `tokenizer` for the text policies (scripted, oracle, replay, human): `builtin:tiny-qwen3` or a hub
   * id; "" for the byte-level one. A model policy uses its own and writes none.
   */
  tokenizer: string;
  greedy: boolean;
  temperature: number;
  top_k: number;
  top_p: number;
  samplingSeed: number;
  oracleSeed: number;
  errorRate: number;
  scripted: string;
  /** The file name of the run to replay (its text is held by the page and handed to the run). */
  replayFile: string;
  mode: "sync" | "async";
  maxSeqLen: number;
  maxRolloutTurns: number;
  maxNewTokens: number;
  /** `env_step_timeout_ms`: a step running longer ends its samples with `error`; 0 waits for ever. */
  envStepTimeoutMs: number;
  structured: boolean;
  thinkingStyle: "paired" | "closing_only";
  envelope: "fork" | "template";
  invalidAction: boolean;
  invalidActionPenalty: number;
  malformedThinkingPenalty: number;
}

export const TASK_NAMES: Record<BuiltinEnvName, string> = {
  sliding_puzzle: "sliding_puzzle_game",
  calculator: "multi_step_calculator_game",
  workspace: "workspace",
};

/**
 * The defaults: the built-in trained model (builtin:trained, docs/training.md) on the sliding puzzle, a few samples,
 * with the turns a puzzle needs (its 10 moves, then the environment's last answer); done in seconds.
 */
export const DEFAULT_SETUP: Setup = {
  env: "sliding_puzzle",
  remoteUrl: "http://127.0.0.1:8765",
  customTaskName: "",
  customDatasetConfig: "{}",
  puzzle: { size: 3, shuffle_moves: 8, max_moves: 10 },
  calculator: { steps: 2, max_operand: 20 },
  workspace: { structured_tools: true, max_turns: 8 },
  datasetSize: 3,
  datasetSeed: 1,
  policy: "model",
  model: "builtin:trained",
  tokenizer: "",
  greedy: false,
  temperature: 1,
  top_k: 0,
  top_p: 0.95,
  samplingSeed: 0,
  oracleSeed: 0,
  errorRate: 0,
  scripted: '[["<action>view</action>"]]',
  replayFile: "",
  mode: "sync",
  maxSeqLen: 4096,
  maxRolloutTurns: 11,
  maxNewTokens: 128,
  structured: false,
  thinkingStyle: "paired",
  envelope: "fork",
  invalidAction: false,
  invalidActionPenalty: 0.5,
  malformedThinkingPenalty: 0.25,
  envStepTimeoutMs: 0,
};

function policyBlock(setup: Setup): Record<string, unknown> {
  // A human run is scripted by the person as it goes; its responses are filled in once it ends.
  if (setup.policy === "human") return { kind: "scripted", responses: [] };
  if (setup.policy === "replay") return { kind: "replay", file: setup.replayFile };
  if (setup.policy === "oracle") return { kind: "oracle", seed: setup.oracleSeed, error_rate: setup.errorRate };
  if (setup.policy === "scripted") {
    let responses: unknown;
    try {
      responses = JSON.parse(setup.scripted);
    } catch {
      responses = setup.scripted; // the scenario check names the field
    }
    return { kind: "scripted", responses };
  }
  return {
    kind: "model",
    model: setup.model,
    ...(setup.greedy ? {} : { temperature: setup.temperature, top_k: setup.top_k, top_p: setup.top_p, seed: setup.samplingSeed }),
  };
}

export const isBuiltinSetupEnv = (env: EnvName): env is BuiltinEnvName => Object.hasOwn(TASK_NAMES, env);

/** The scenario's `envs` entry and dataset settings for the chosen environment. */
function environmentBlock(setup: Setup): { task: string; envConfig: Record<string, unknown>; datasetConfig: unknown } {
  const env = setup.env;
  if (isBuiltinSetupEnv(env)) {
    const workspace = { structured_tools: setup.workspace.structured_tools, max_turns: setup.workspace.max_turns };
    const datasetConfig = env === "sliding_puzzle" ? setup.puzzle : env === "calculator" ? setup.calculator : workspace;
    return { task: TASK_NAMES[env], envConfig: env === "workspace" ? workspace : {}, datasetConfig };
  }
  let datasetConfig: unknown;
  try {
    datasetConfig = JSON.parse(setup.customDatasetConfig);
  } catch {
    datasetConfig = setup.customDatasetConfig; // the scenario check names the field
  }
  return {
    task: setup.customTaskName || env,
    envConfig: env === "http" ? { url: setup.remoteUrl } : {},
    datasetConfig,
  };
}

export function scenarioFromSetup(setup: Setup): Record<string, unknown> {
  const { task, envConfig, datasetConfig } = environmentBlock(setup);
  return {
    mode: setup.mode,
    max_seq_len: setup.maxSeqLen,
    max_rollout_turns: setup.maxRolloutTurns,
    ...(setup.envStepTimeoutMs > 0 ? { env_step_timeout_ms: setup.envStepTimeoutMs } : {}),
    ...(setup.policy === "model" ? { max_new_tokens: setup.maxNewTokens, greedy: setup.greedy } : {}),
    ...(setup.policy !== "model" && setup.tokenizer ? { tokenizer: setup.tokenizer } : {}),
    envs: { [task]: { env: setup.env, config: envConfig } },
    dataset: { task_name: task, size: setup.datasetSize, seed: setup.datasetSeed, config: datasetConfig },
    policy: policyBlock(setup),
    ...(setup.structured ? { structured: { enabled: true, thinking_style: setup.thinkingStyle, envelope: setup.envelope } } : {}),
    ...(setup.invalidAction
      ? {
          invalid_action: {
            enabled: true,
            invalid_action_penalty: setup.invalidActionPenalty,
            malformed_thinking_penalty: setup.malformedThinkingPenalty,
            use_environment_flags: true,
          },
        }
      : {}),
  };
}

/**
 * The form's values that write exactly `scenario` (`scenarioFromSetup` of them parses to the same scenario), or null
 * when the form has no way to write it: several environments, explicit samples, a model's device or dtype, a key the
 * form does not set… The scenario then stays in the JSON editor as it is, and the form says so. Values the scenario
 * does not decide (another environment's settings) are `base`'s.
 */
export function setupFromScenario(scenario: Scenario, base: Setup = DEFAULT_SETUP): Setup | null {
  const envs = Object.entries(scenario.envs);
  const dataset = scenario.dataset;
  if (envs.length !== 1 || !dataset) return null;
  const [task, { env, config: envConfig }] = envs[0]!;
  const setup: Setup = structuredClone(base);
  setup.env = env;
  setup.mode = scenario.mode;
  setup.maxSeqLen = scenario.max_seq_len;
  setup.maxRolloutTurns = scenario.max_rollout_turns;
  setup.envStepTimeoutMs = scenario.env_step_timeout_ms ?? 0;
  setup.datasetSize = dataset.size;
  setup.datasetSeed = dataset.seed;
  const datasetConfig = (dataset.config ?? {}) as Record<string, number & boolean>;
  if (env === "sliding_puzzle") setup.puzzle = { ...setup.puzzle, ...datasetConfig };
  else if (env === "calculator") setup.calculator = { ...setup.calculator, ...datasetConfig };
  else if (env === "workspace") setup.workspace = { ...setup.workspace, ...datasetConfig };
  else {
    setup.customTaskName = task === env ? "" : task;
    setup.customDatasetConfig = JSON.stringify(dataset.config ?? {});
    if (env === "http") setup.remoteUrl = String((envConfig as { url?: unknown } | undefined)?.url ?? "");
  }
  setup.tokenizer = scenario.tokenizer ?? "";
  const policy = scenario.policy;
  if (policy.kind === "model") {
    setup.policy = "model";
    setup.model = policy.model;
    setup.greedy = scenario.greedy ?? false;
    setup.maxNewTokens = scenario.max_new_tokens ?? setup.maxNewTokens;
    if (!setup.greedy) {
      setup.temperature = policy.temperature ?? setup.temperature;
      setup.top_k = policy.top_k ?? setup.top_k;
      setup.top_p = policy.top_p ?? setup.top_p;
      setup.samplingSeed = policy.seed ?? setup.samplingSeed;
    }
  } else if (policy.kind === "oracle") {
    setup.policy = "oracle";
    setup.oracleSeed = policy.seed ?? 0;
    setup.errorRate = policy.error_rate ?? 0;
  } else if (policy.kind === "scripted") {
    setup.policy = "scripted";
    setup.scripted = JSON.stringify(policy.responses);
  } else if (policy.kind === "replay") {
    setup.policy = "replay";
    setup.replayFile = policy.file;
  } else {
    // The form has no inference-server policy: such a scenario is edited as JSON.
    return null;
  }
  setup.structured = Boolean(scenario.structured?.enabled);
  if (setup.structured) {
    setup.thinkingStyle = scenario.structured?.thinking_style === "closing_only" ? "closing_only" : "paired";
    setup.envelope = scenario.structured?.envelope ?? "fork";
  }
  setup.invalidAction = Boolean(scenario.invalid_action?.enabled);
  if (setup.invalidAction) {
    setup.invalidActionPenalty = scenario.invalid_action?.invalid_action_penalty ?? setup.invalidActionPenalty;
    setup.malformedThinkingPenalty = scenario.invalid_action?.malformed_thinking_penalty ?? setup.malformedThinkingPenalty;
  }
  return writesScenario(setup, scenario) ? setup : null;
}

/** Whether the form's `setup` writes `scenario`: the two parse to the same scenario. */
function writesScenario(setup: Setup, scenario: Scenario): boolean {
  try {
    return equal(parseScenario(scenarioFromSetup(setup)), parseScenario(scenario));
  } catch {
    return false;
  }
}

/**
 * What makes the form's set-up one that cannot work, in words (empty when it can): each would fail every sample
 * only once the run is under way. The form shows them, and Run refuses such a set-up with them.
 */
export function setupProblems(setup: Setup): string[] {
  const problems: string[] = [];
  const builtin = isBuiltinSetupEnv(setup.env);
  if (setup.policy === "oracle" && !builtin) {
    problems.push(
      `The oracle plays the built-in environments only (sliding puzzle, calculator, workspace): it cannot play “${setup.env}”. Choose the scripted, replay, model or human policy for it.`,
    );
  }
  if (setup.policy === "scripted" && setup.scripted === DEFAULT_SETUP.scripted && setup.env !== DEFAULT_SETUP.env) {
    problems.push(
      `The scripted responses are still the sliding puzzle's example (<action>view</action>), which “${setup.env}” does not understand: write its responses (a list per sample) under Scripted responses.`,
    );
  }
  return problems;
}
