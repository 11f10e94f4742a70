/**
 * What the training data covers: every built-in environment and the starter number-guess module, each at the
 * lab's default settings (src/app/setup/setup.ts's DEFAULT_SETUP; turn budgets long enough for the oracle to
 * finish), and the dataset seeds of the two splits. A split's dataset seed s generates its episodes; training seeds
 * count up from 0, held-out ones from HELD_OUT_SEED_BASE, so the two never share a seed. Seeds alone do not keep
 * the splits apart (the default puzzle has only ~62 distinct start boards), so `collect.ts` also drops every
 * training episode whose task (prompt and initial state) is a held-out one.
 */

import { CONFIG_FILE_NAMES, LOG_FILE_NAMES } from "../envs/workspace/index.js";
import type { Thoughts } from "./labelled-oracle.js";
import type { RenameRules } from "./rename.js";

/** The first held-out dataset seed; training seeds stay below it. */
export const HELD_OUT_SEED_BASE = 1_000_000;

export type Split = "train" | "held_out";

export interface EnvironmentPlan {
  /** Names the plan in logs and in `data.json` (an environment can have more than one). */
  name: string;
  /** The environment's `name` (built-in, or a module in environments/). */
  env: string;
  task: string;
  envConfig: Record<string, unknown>;
  datasetConfig: Record<string, unknown>;
  maxRolloutTurns: number;
  maxSeqLen: number;
  /** The structured Hermes tool-call protocol with paired think blocks (the workspace's tools). */
  structured?: boolean;
  /**
   * How the held-out split is kept out of training: by task (the default: no training episode has a held-out
   * task), or by dataset seed only, where tasks repeat so often that excluding them would leave no training data.
   */
  heldOutBy?: "task" | "seed";
  /** What the planned turns think aloud before acting (labelled-oracle.ts): paired think blocks for the model to learn. */
  thoughts?: Thoughts;
  /** The task's file, renamed in a share of the training episodes (`rename.ts`; train:data's `--rename-rate`). */
  renames?: RenameRules;
}

const stem = (names: readonly string[], ext: string) => names.map((n) => n.slice(0, -ext.length));

/**
 * The workspace's config and log files as the tokenizer sees them in paths (`workspace` `/service` `.ini`, `/logs`
 * `/app` `.log`), and names to give them: none the environment uses, nor its services' names (`gateway`, …, which its
 * config files hold).
 */
export const WORKSPACE_RENAMES: RenameRules = {
  files: [
    { before: "workspace", names: stem(CONFIG_FILE_NAMES, ".ini"), after: ".ini" },
    { before: "/logs", names: stem(LOG_FILE_NAMES, ".log"), after: ".log" },
  ],
  pool: [
    "agent", "alerts", "audit", "backup", "batch", "broker", "cluster", "cron", "daemon", "deploy", "events", "jobs",
    "mailer", "metrics", "monitor", "nginx", "payments", "proxy", "queue", "redis", "router", "scheduler", "session",
    "storage", "sync", "uploads", "users", "web",
  ],
  // One token each after a `/` in the recipe's 1,024 merges, as the environment's own names are (`--rename-same-tokens`).
  tokenPool: [
    "api", "archive", "billing", "cache", "client", "core", "errors", "exports", "gateway", "helpers", "ingest",
    "inventory", "loader", "models", "parser", "render", "reports", "schema", "search", "utils", "views",
  ],
};

/**
 * Large enough that no oracle reply is cut (the workspace's tool calls with file contents are the longest); a
 * model's own budget is set where it runs.
 */
export const TRAINING_MAX_NEW_TOKENS = 1024;

export const ENVIRONMENT_PLANS: readonly EnvironmentPlan[] = [
  {
    name: "sliding_puzzle",
    env: "sliding_puzzle",
    task: "sliding_puzzle_game",
    envConfig: {},
    datasetConfig: { size: 3, shuffle_moves: 8, max_moves: 10 },
    // One turn past the move budget, so a run that used its moves still gets the environment's last answer.
    maxRolloutTurns: 11,
    maxSeqLen: 4096,
    // ~62 start boards, half of them 2×2 (`size` is the largest side): holding their tasks out would leave no 2×2
    // board to train on. The shuffled plan below holds its (mostly distinct) 3×3 tasks out instead.
    heldOutBy: "seed",
    thoughts: "puzzle_board",
  },
  {
    // Longer shuffles: many more start boards, so held-out tasks can be kept out of training.
    name: "sliding_puzzle_shuffled",
    env: "sliding_puzzle",
    task: "sliding_puzzle_game",
    envConfig: {},
    datasetConfig: { size: 3, shuffle_moves: 16, max_moves: 20 },
    maxRolloutTurns: 21,
    maxSeqLen: 4096,
    thoughts: "puzzle_board",
  },
  {
    name: "calculator",
    env: "calculator",
    task: "multi_step_calculator_game",
    envConfig: {},
    datasetConfig: { steps: 2, max_operand: 20 },
    maxRolloutTurns: 6,
    maxSeqLen: 2048,
  },
  {
    name: "workspace",
    env: "workspace",
    task: "workspace",
    envConfig: { structured_tools: true, max_turns: 8 },
    datasetConfig: {},
    maxRolloutTurns: 8,
    maxSeqLen: 8192,
    structured: true,
    thoughts: "tool_step",
    renames: WORKSPACE_RENAMES,
  },
  {
    name: "number_guess",
    env: "number_guess",
    task: "number_guess",
    envConfig: {},
    datasetConfig: { max_number: 20, max_guesses: 5 },
    maxRolloutTurns: 5,
    maxSeqLen: 2048,
    // Twenty secrets, one prompt: every task recurs within a few seeds, and the prompt tells none of them apart.
    heldOutBy: "seed",
  },
];

/** The dataset seeds of a split: `count` of them from the split's base. */
export function splitSeeds(split: Split, count: number): number[] {
  const base = split === "train" ? 0 : HELD_OUT_SEED_BASE;
  if (split === "train" && count > HELD_OUT_SEED_BASE) throw new RangeError(`at most ${HELD_OUT_SEED_BASE} training seeds, asked for ${count}`);
  return Array.from({ length: count }, (_, i) => base + i);
}

/** The scenario of one dataset seed (the policy is given by the collector, so it is only recorded here). */
export function planScenario(plan: EnvironmentPlan, datasetSeed: number, size: number, oracle: { seed: number; errorRate: number }): Record<string, unknown> {
  return {
    mode: "sync",
    max_seq_len: plan.maxSeqLen,
    max_rollout_turns: plan.maxRolloutTurns,
    max_new_tokens: TRAINING_MAX_NEW_TOKENS,
    envs: { [plan.task]: { env: plan.env, config: plan.envConfig } },
    dataset: { task_name: plan.task, size, seed: datasetSeed, config: plan.datasetConfig },
    policy: { kind: "oracle", seed: oracle.seed, error_rate: oracle.errorRate },
    ...(plan.structured
      ? {
          structured: { enabled: true, thinking_style: "paired", envelope: "fork" },
          invalid_action: { enabled: true, invalid_action_penalty: 0.5, malformed_thinking_penalty: 0.25, use_environment_flags: true },
        }
      : {}),
  };
}
