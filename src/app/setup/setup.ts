/**
 * The run set-up form's values and the scenario they make. The scenario (shown in the JSON editor) is what runs;
 * the form is a convenient way to write one.
 */

export type EnvName = "sliding_puzzle" | "calculator" | "workspace";
export type PolicyKind = "model" | "oracle" | "scripted" | "replay" | "human";

export interface Setup {
  env: EnvName;
  puzzle: { size: number; shuffle_moves: number; max_moves: number };
  calculator: { steps: number; max_operand: number };
  workspace: { structured_tools: boolean; max_turns: number };
  datasetSize: number;
  datasetSeed: number;
  policy: PolicyKind;
  model: string;
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
  structured: boolean;
  thinkingStyle: "paired" | "closing_only";
  envelope: "fork" | "template";
  invalidAction: boolean;
  invalidActionPenalty: number;
  malformedThinkingPenalty: number;
}

export const TASK_NAMES: Record<EnvName, string> = {
  sliding_puzzle: "sliding_puzzle_game",
  calculator: "multi_step_calculator_game",
  workspace: "workspace",
};

/** The defaults: the built-in model on the sliding puzzle, a few samples and turns, done in seconds. */
export const DEFAULT_SETUP: Setup = {
  env: "sliding_puzzle",
  puzzle: { size: 3, shuffle_moves: 8, max_moves: 10 },
  calculator: { steps: 2, max_operand: 20 },
  workspace: { structured_tools: true, max_turns: 8 },
  datasetSize: 3,
  datasetSeed: 1,
  policy: "model",
  model: "builtin:tiny",
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
  maxSeqLen: 2048,
  maxRolloutTurns: 3,
  maxNewTokens: 48,
  structured: false,
  thinkingStyle: "paired",
  envelope: "fork",
  invalidAction: false,
  invalidActionPenalty: 0.5,
  malformedThinkingPenalty: 0.25,
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

export function scenarioFromSetup(setup: Setup): Record<string, unknown> {
  const task = TASK_NAMES[setup.env];
  const datasetConfig =
    setup.env === "sliding_puzzle" ? setup.puzzle : setup.env === "calculator" ? setup.calculator : { structured_tools: setup.workspace.structured_tools, max_turns: setup.workspace.max_turns };
  const envConfig = setup.env === "workspace" ? { structured_tools: setup.workspace.structured_tools, max_turns: setup.workspace.max_turns } : {};
  return {
    mode: setup.mode,
    max_seq_len: setup.maxSeqLen,
    max_rollout_turns: setup.maxRolloutTurns,
    ...(setup.policy === "model" ? { max_new_tokens: setup.maxNewTokens, greedy: setup.greedy } : {}),
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
