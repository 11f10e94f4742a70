/**
 * Runs a scenario: builds the environments, the input batch (tokenized with the built-in byte-level tokenizer)
 * and the policy, runs the sync or async rollout, and returns the result JSON of `scenario-format.md`.
 * Works in Node and in the browser alike; reading a replay file is the caller's job (`loadFile`).
 */

import {
  BatchedDataDict,
  byteLevelTokenizer,
  resolveStructuredToolUse,
  runAsyncMultiTurnRollout,
  runMultiTurnRollout,
  type EnvironmentInterface,
  type GenerationInterface,
  type Message,
  type PauseController,
  type RolloutEvent,
  type TokenizerInterface,
} from "../core/index.js";
import { findEnvironment, type EnvironmentDefinition } from "../envs/index.js";
import { oraclePolicy } from "../policy/oracle/index.js";
import { replayPolicy, type SavedSample } from "../policy/replay.js";
import { scriptedPolicy } from "../policy/scripted.js";
import { batchToResult, parseSavedRun, type RolloutResultJson } from "./result.js";
import { ScenarioError, type Scenario } from "./schema.js";

export interface RunScenarioOptions {
  /** Reads a file the scenario names (a replay's run), relative to the scenario. */
  loadFile?: (path: string) => Promise<string>;
  /** A model policy, for scenarios whose policy kind is `model` (built by the caller: Node or Worker). */
  modelPolicy?: (policy: Extract<Scenario["policy"], { kind: "model" }>) => Promise<LoadedPolicy>;
  /** A policy to use instead of the scenario's (the lab's human policy). */
  policyOverride?: LoadedPolicy;
  onEvent?: (event: RolloutEvent) => void;
  signal?: AbortSignal;
  pause?: PauseController;
}

export interface LoadedPolicy {
  generation: GenerationInterface;
  tokenizer: TokenizerInterface;
  /** Frees what the policy holds (a model's KV cache, GPU buffers) once the rollout is over. */
  dispose?: () => Promise<void>;
}

export interface PreparedScenario {
  inputBatch: BatchedDataDict;
  taskToEnv: Record<string, EnvironmentInterface>;
  environments: Record<string, EnvironmentDefinition>;
}

function problem(path: string, what: string): ScenarioError {
  return new ScenarioError([`${path}: ${what}`]);
}

/** Builds environments and the tokenized input batch. */
export function prepareScenario(scenario: Scenario, tokenizer: TokenizerInterface = byteLevelTokenizer): PreparedScenario {
  const taskToEnv: Record<string, EnvironmentInterface> = {};
  const environments: Record<string, EnvironmentDefinition> = {};
  for (const [task, spec] of Object.entries(scenario.envs)) {
    const definition = findEnvironment(spec.env);
    if (!definition) throw problem(`envs.${task}.env`, `unknown environment '${spec.env}'`);
    try {
      taskToEnv[task] = definition.create(spec.config ?? {});
    } catch (e) {
      throw problem(`envs.${task}.config`, (e as Error).message);
    }
    environments[task] = definition;
  }

  let data: {
    task_name: string;
    idx?: number;
    message_log: { role: string; content: string }[];
    extra_env_info?: Record<string, unknown> | null;
    stop_strings?: string[] | null;
    loss_multiplier?: number;
  }[];
  if (scenario.dataset) {
    const { task_name, size, seed, config } = scenario.dataset;
    try {
      data = environments[task_name]!.generateDataset({ size, seed, config: config ?? {}, taskName: task_name });
    } catch (e) {
      throw problem("dataset.config", (e as Error).message);
    }
  } else {
    data = scenario.samples!;
  }

  const rows = data.map((d, position) => {
    const log: Message[] = d.message_log.map((m) => ({ role: m.role, content: m.content, token_ids: tokenizer.encode(m.content) }));
    return {
      message_log: log,
      length: log.reduce((n, m) => n + m.token_ids.length, 0),
      extra_env_info: d.extra_env_info ?? null,
      loss_multiplier: d.loss_multiplier ?? 1,
      idx: d.idx ?? position,
      task_name: d.task_name,
      stop_strings: d.stop_strings ?? null,
    };
  });
  return { inputBatch: BatchedDataDict.fromRows(rows), taskToEnv, environments };
}

async function buildPolicy(
  scenario: Scenario,
  prepared: PreparedScenario,
  options: RunScenarioOptions,
): Promise<LoadedPolicy> {
  const policy = scenario.policy;
  const tokenizer = byteLevelTokenizer;
  switch (policy.kind) {
    case "scripted":
      return { generation: scriptedPolicy(policy.responses, tokenizer), tokenizer };
    case "oracle":
      return { generation: oraclePolicy(tokenizer, { seed: policy.seed ?? 0, errorRate: policy.error_rate ?? 0 }), tokenizer };
    case "replay": {
      if (!options.loadFile) throw problem("policy.file", "this runner cannot read files");
      let saved: SavedSample[];
      try {
        saved = parseSavedRun(await options.loadFile(policy.file));
      } catch (e) {
        throw problem("policy.file", `cannot use '${policy.file}': ${(e as Error).message}`);
      }
      const idxs = prepared.inputBatch.get("idx") as number[];
      return { generation: replayPolicy(saved, idxs, tokenizer), tokenizer };
    }
    case "model":
      if (!options.modelPolicy) throw problem("policy.kind", "this runner has no model backend for policy kind 'model'");
      return options.modelPolicy(policy);
  }
}

/** Runs one scenario to its result JSON. */
export async function runScenario(scenario: Scenario, options: RunScenarioOptions = {}): Promise<RolloutResultJson> {
  let structuredCfg;
  try {
    structuredCfg = resolveStructuredToolUse(scenario.structured ?? null);
  } catch (e) {
    throw problem("structured", (e as Error).message);
  }
  const prepared = prepareScenario(scenario);
  const { generation, tokenizer, dispose } = options.policyOverride ?? (await buildPolicy(scenario, prepared, options));
  try {
    // The model's own tokenizer tokenizes the prompts when it is not the byte-level one.
    const ready = tokenizer === byteLevelTokenizer ? prepared : prepareScenario(scenario, tokenizer);
    return await rollout(scenario, ready, generation, tokenizer, structuredCfg, options);
  } finally {
    await dispose?.();
  }
}

async function rollout(
  scenario: Scenario,
  ready: PreparedScenario,
  generation: GenerationInterface,
  tokenizer: TokenizerInterface,
  structuredCfg: ReturnType<typeof resolveStructuredToolUse>,
  options: RunScenarioOptions,
): Promise<RolloutResultJson> {
  const run = scenario.mode === "sync" ? runMultiTurnRollout : runAsyncMultiTurnRollout;
  const [batch, metrics] = await run({
    policyGeneration: generation,
    tokenizer,
    taskToEnv: ready.taskToEnv,
    inputBatch: ready.inputBatch,
    maxSeqLen: scenario.max_seq_len,
    maxRolloutTurns: scenario.max_rollout_turns,
    greedy: scenario.greedy ?? false,
    invalidActionCfg: scenario.invalid_action ?? null,
    structuredCfg,
    maxNewTokens: scenario.max_new_tokens,
    endOnResponseTruncation: scenario.end_on_response_truncation ?? false,
    failFast: scenario.fail_fast ?? false,
    envStepTimeoutMs: scenario.env_step_timeout_ms,
    signal: options.signal,
    pause: options.pause,
    onEvent: options.onEvent,
  });
  return batchToResult(batch, metrics);
}
