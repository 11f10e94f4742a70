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
import { findEnvironment, type EnvironmentDefinition, type EnvironmentLookup } from "../envs/index.js";
import { oraclePolicy } from "../policy/oracle/index.js";
import { replayPolicy, type SavedSample } from "../policy/replay.js";
import { scriptedPolicy } from "../policy/scripted.js";
import { batchToResult, parseSavedRun, type RolloutResultJson } from "./result.js";
import { parseGeneratedDataset, ScenarioError, type Scenario } from "./schema.js";

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
  /** The environments scenarios may name; the built-in ones by default. */
  environments?: EnvironmentLookup;
  /** Wraps the policy once it is built (the lab's forks: a forced first turn, the original's turn numbers). */
  wrapPolicy?: (policy: LoadedPolicy) => LoadedPolicy;
  /**
   * The most samples this process can hold (a Node command's: `nodeSampleLimit`, from its heap limit): a dataset
   * `size` (or a `samples` list) above it is refused before anything is generated, with `why` as the reason.
   */
  sampleLimit?: SampleLimit;
}

export interface SampleLimit {
  max: number;
  /** Why no more fit, for the error: `at most 66304 fit in its 4144 MiB heap …`. */
  why: string;
}

export interface LoadedPolicy {
  generation: GenerationInterface;
  tokenizer: TokenizerInterface;
  /** Frees what the policy holds (a model's KV cache, GPU buffers) once the rollout is over. */
  dispose?: () => Promise<void>;
}

export interface PreparedScenario {
  /** The datum specs, the scenario's own or generated, checked; not yet tokenized. */
  data: DatumSpec[];
  taskToEnv: Record<string, EnvironmentInterface>;
  environments: Record<string, EnvironmentDefinition>;
}

type DatumSpec = NonNullable<Scenario["samples"]>[number];

function problem(path: string, what: string): ScenarioError {
  return new ScenarioError([`${path}: ${what}`]);
}

/** A run of more samples than `limit` allows cannot finish: refused up front, naming the field. */
function checkSampleCount(scenario: Scenario, limit: SampleLimit | undefined): void {
  if (!limit) return;
  const [field, count] = scenario.dataset ? ["dataset.size", scenario.dataset.size] : ["samples", scenario.samples?.length ?? 0];
  if (count > limit.max) throw problem(field, `${count} samples cannot fit in this process's memory: ${limit.why}`);
}

/** Builds the environments and the dataset (once: a remote environment's dataset comes from its server). */
export async function prepareScenario(
  scenario: Scenario,
  lookup: EnvironmentLookup = findEnvironment,
  sampleLimit?: SampleLimit,
): Promise<PreparedScenario> {
  checkSampleCount(scenario, sampleLimit);
  // Keyed by the scenario's task names: objects without a prototype, so no task name ("constructor", "toString")
  // finds anything its scenario did not put there.
  const taskToEnv: Record<string, EnvironmentInterface> = Object.create(null);
  const environments: Record<string, EnvironmentDefinition> = Object.create(null);
  for (const [task, spec] of Object.entries(scenario.envs)) {
    const definition = lookup(spec.env);
    if (!definition) throw problem(`envs.${task}.env`, `unknown environment '${spec.env}'`);
    try {
      taskToEnv[task] = await definition.create(spec.config ?? {});
    } catch (e) {
      throw problem(`envs.${task}.config`, (e as Error).message);
    }
    environments[task] = definition;
  }

  let data: DatumSpec[];
  if (scenario.dataset) {
    const { task_name, size, seed, config } = scenario.dataset;
    const definition = Object.hasOwn(environments, task_name) ? environments[task_name] : undefined;
    if (!definition) throw problem("dataset.task_name", `'${task_name}' is not a key of envs`);
    let generated: unknown;
    try {
      generated = await definition.generateDataset({
        size,
        seed,
        config: config ?? {},
        taskName: task_name,
        envConfig: scenario.envs[task_name]!.config ?? {},
      });
    } catch (e) {
      throw problem("dataset.config", (e as Error).message);
    }
    // A user's or a remote environment's dataset is checked like a scenario's own samples.
    data = parseGeneratedDataset(generated, `dataset (generated by '${definition.name}')`);
    const stray = data.findIndex((d) => !Object.hasOwn(scenario.envs, d.task_name));
    if (stray >= 0) throw problem(`dataset (generated by '${definition.name}')[${stray}].task_name`, `'${data[stray]!.task_name}' is not a key of envs`);
  } else {
    data = scenario.samples!;
  }

  return { data, taskToEnv, environments };
}

/** The input batch: every message tokenized with the policy's tokenizer. */
export function inputBatchFor(prepared: PreparedScenario, tokenizer: TokenizerInterface = byteLevelTokenizer): BatchedDataDict {
  const rows = prepared.data.map((d, position) => {
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
  return BatchedDataDict.fromRows(rows);
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
      const idxs = prepared.data.map((d, position) => d.idx ?? position);
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
  const prepared = await prepareScenario(scenario, options.environments, options.sampleLimit);
  const built = options.policyOverride ?? (await buildPolicy(scenario, prepared, options));
  const { generation, tokenizer, dispose } = options.wrapPolicy ? options.wrapPolicy(built) : built;
  try {
    // The policy's tokenizer (a model's own, or the byte-level one) tokenizes the prompts.
    return await rollout(scenario, prepared, inputBatchFor(prepared, tokenizer), generation, tokenizer, structuredCfg, options);
  } finally {
    await dispose?.();
  }
}

async function rollout(
  scenario: Scenario,
  prepared: PreparedScenario,
  inputBatch: BatchedDataDict,
  generation: GenerationInterface,
  tokenizer: TokenizerInterface,
  structuredCfg: ReturnType<typeof resolveStructuredToolUse>,
  options: RunScenarioOptions,
): Promise<RolloutResultJson> {
  const run = scenario.mode === "sync" ? runMultiTurnRollout : runAsyncMultiTurnRollout;
  const [batch, metrics] = await run({
    policyGeneration: generation,
    tokenizer,
    taskToEnv: prepared.taskToEnv,
    inputBatch,
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
