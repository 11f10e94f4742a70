/**
 * The workspace environment: the derived library's `MultiTurnSessionEnvironment` (fork-additions.md §6.2) over an
 * in-memory workspace instead of a container. Per sample (`_process_one`): parse the turn (structured Hermes
 * tool calls, or legacy fenced bash), stamp `invalid_action`, run the command, then grade when the model is done
 * or the turn budget is spent, else return the output (or a nudge) and go on.
 *
 * Inputs are never changed: each step deep-copies the sample's metadata and returns the copy.
 */

import type { EnvironmentInterface, EnvironmentReturn, EnvMessage, Metadata } from "../../core/index.js";
import { booleanSetting, checkConfigKeys, integerSetting } from "../config.js";
import { type FsState, VirtualFs } from "./fs.js";
import { DEFAULT_OUTPUT_LIMIT, formatObservation, runShell } from "./shell.js";
import { gradeTask, TASK_KINDS, type WorkspaceTask } from "./tasks.js";
import { LEGACY_NUDGE, parseLegacyAction, parseStructuredAction, STRUCTURED_NUDGE } from "./tools.js";

export interface WorkspaceEnvConfig {
  /** Parse Hermes tool calls (true) or the legacy ```bash fence and TASK_COMPLETE line (false). */
  structured_tools: boolean;
  max_turns: number;
  /** Characters of a command's observation kept before the truncation mark. */
  output_limit: number;
}

export const WORKSPACE_ENV_DEFAULTS: WorkspaceEnvConfig = { structured_tools: true, max_turns: 8, output_limit: DEFAULT_OUTPUT_LIMIT };

/** A sample's `extra_env_info`: plain JSON, deep-cloned by the rollout between turns. */
export interface WorkspaceMetadata {
  task: WorkspaceTask;
  fs: FsState;
  /** Turns taken so far (the reference's `_turn`). */
  turn: number;
  /** The dataset's per-sample turn budget; when absent the environment's `max_turns` applies. */
  max_turns?: number;
  /** The grading text, once graded. */
  verdict?: string;
  /** Stamped on every returned metadata: the turn had no runnable action (§4.5). */
  invalid_action?: boolean;
  [extra: string]: unknown;
}

export function workspaceEnvConfig(config: Record<string, unknown>): WorkspaceEnvConfig {
  const where = "workspace config";
  const defaults = WORKSPACE_ENV_DEFAULTS;
  checkConfigKeys(where, config, Object.keys(defaults));
  return {
    structured_tools: booleanSetting(where, config, "structured_tools", defaults.structured_tools),
    max_turns: integerSetting(where, config, "max_turns", defaults.max_turns, 1),
    output_limit: integerSetting(where, config, "output_limit", defaults.output_limit, 1),
  };
}

export interface WorkspaceTurn {
  observation: EnvMessage;
  metadata: WorkspaceMetadata | Metadata;
  reward: number;
  terminated: boolean;
}

/** Checks and copies a sample's metadata (it may have been edited by hand in a scenario). */
function readMetadata(metadata: Metadata): WorkspaceMetadata {
  const m = metadata as Partial<WorkspaceMetadata> | null;
  if (!m || typeof m !== "object") throw new Error("workspace: the sample has no metadata");
  if (!m.task || !(TASK_KINDS as readonly string[]).includes(m.task.kind)) throw new Error("workspace: metadata.task is missing or unknown");
  if (typeof m.turn !== "number") throw new Error("workspace: metadata.turn must be a number");
  VirtualFs.fromJSON(m.fs);
  return structuredClone(m) as WorkspaceMetadata;
}

const observation = (content: string): EnvMessage => ({ role: "user", content });

/** One sample's step: `_process_one`. */
export function processWorkspaceTurn(log: readonly EnvMessage[], metadata: Metadata, config: WorkspaceEnvConfig): WorkspaceTurn {
  let next: WorkspaceMetadata | null = null;
  try {
    next = readMetadata(metadata);
    const text = log.length ? String(log[log.length - 1]!.content) : "";
    const action = config.structured_tools ? parseStructuredAction(text) : legacyAction(text);
    next.invalid_action = action.invalid;

    const fs = VirtualFs.fromJSON(next.fs);
    const execObservation = action.command ? formatObservation(runShell(fs, action.command), config.output_limit) : "";
    next.fs = fs.toJSON();

    const maxTurns = next.max_turns ?? config.max_turns;
    if (action.done || next.turn + 1 >= maxTurns) {
      const grade = gradeTask(next.task, fs);
      const reward = grade.solved ? 1.0 : 0.0;
      const verdict = verdictText(grade.solved, grade.reason, action.done ? null : maxTurns);
      next.verdict = verdict;
      next.turn += 1;
      const content = execObservation ? `${execObservation}\n${verdict}`.trim() : verdict;
      return { observation: observation(content), metadata: next, reward, terminated: true };
    }
    next.turn += 1;
    const nudge = config.structured_tools ? STRUCTURED_NUDGE : LEGACY_NUDGE;
    return { observation: observation(execObservation || nudge), metadata: next, reward: 0, terminated: false };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return {
      observation: observation(`[environment error: ${message}]`),
      metadata: next ?? (metadata === null ? null : structuredClone(metadata)),
      reward: 0,
      terminated: true,
    };
  }
}

/** The legacy parser's verdict: invalid when there is neither a command nor TASK_COMPLETE. */
function legacyAction(text: string): { command: string; done: boolean; invalid: boolean } {
  const { command, done } = parseLegacyAction(text);
  return { command, done, invalid: !command && !done };
}

export function verdictText(solved: boolean, reason: string, turnLimit: number | null): string {
  const head = turnLimit === null ? "[graded]" : `[graded: turn limit of ${turnLimit} reached]`;
  return solved ? `${head} task solved: reward 1.0` : `${head} task not solved: ${reason}; reward 0.0`;
}

export class WorkspaceEnv implements EnvironmentInterface {
  readonly config: WorkspaceEnvConfig;

  constructor(config: Partial<WorkspaceEnvConfig> = {}) {
    this.config = workspaceEnvConfig(config);
  }

  step(messageLogBatch: EnvMessage[][], metadata: Metadata[]): EnvironmentReturn {
    const turns = messageLogBatch.map((log, i) => processWorkspaceTurn(log, metadata[i] ?? null, this.config));
    return {
      observations: turns.map((t) => t.observation),
      metadata: turns.map((t) => t.metadata as Metadata),
      // The model stops at its end-of-turn token; the environment adds no stop strings.
      next_stop_strings: null,
      rewards: turns.map((t) => t.reward),
      terminateds: turns.map((t) => t.terminated),
      answers: null,
    };
  }
}
