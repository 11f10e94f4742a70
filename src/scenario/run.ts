/**
 * Runs a scenario: builds the environments, the input batch (tokenized with the policy's tokenizer: a model's own,
 * the scenario's `tokenizer`, else the built-in byte-level one) and the policy, runs the sync or async rollout, and returns the result JSON of `scenario-format.md`.
 * Works in Node and in the browser alike; reading a replay file is the caller's job (`loadFile`).
 */

import {
  BatchedDataDict,
  byteLevelTokenizer,
  renderChatTemplate,
  resolveStructuredToolUse,
  runAsyncMultiTurnRollout,
  runMultiTurnRollout,
  type EnvironmentInterface,
  type GenerationInterface,
  type Message,
  type PauseController,
  type RolloutEvent,
  type TokenizerInterface,
  type ToolSpec,
} from "../core/index.js";
import { BUILTIN_ENVIRONMENTS, findEnvironment, type EnvironmentDefinition, type EnvironmentLookup } from "../envs/index.js";
import { BYTE_LEVEL_SPECS } from "../policy/builtin-model/presets.js";
import { UnknownModelError } from "../policy/llm/model-source.js";
import { oraclePolicy } from "../policy/oracle/index.js";
import { replayPolicy, type SavedSample } from "../policy/replay.js";
import { scriptedPolicy } from "../policy/scripted.js";
import { environmentMetrics, type EnvironmentMetrics } from "./environment-metrics.js";
import { batchToResult, parseSavedRun, type RolloutResultJson } from "./result.js";
import { parseGeneratedDataset, ScenarioError, type Scenario } from "./schema.js";

export interface RunScenarioOptions {
  /** Reads a file the scenario names (a replay's run), relative to the scenario. */
  loadFile?: (path: string) => Promise<string>;
  /** A model policy, for scenarios whose policy kind is `model` (built by the caller: Node or Worker). */
  modelPolicy?: (policy: Extract<Scenario["policy"], { kind: "model" }>) => Promise<LoadedPolicy>;
  /**
   * An inference-server policy, for scenarios whose policy kind is `server` (built by the caller, which loads its
   * tokenizer and, in Node, reads its API key: src/cli/node-run.ts, the page's rollout worker).
   */
  serverPolicy?: (policy: Extract<Scenario["policy"], { kind: "server" }>) => Promise<LoadedPolicy>;
  /**
   * A policy to use instead of the scenario's (the lab's human policy); as a function, it is given the tokenizer
   * the text policies use (the scenario's `tokenizer`, else the byte-level one).
   */
  policyOverride?: LoadedPolicy | ((tokenizer: TokenizerInterface) => LoadedPolicy);
  /**
   * Loads the tokenizer a scenario's `tokenizer` key names (not a byte-level one), for the text policies: Node's
   * `loadPolicyTokenizer` (src/policy/llm/tokenizer-load.ts), the page's worker's own.
   */
  textTokenizer?: (spec: string) => Promise<TokenizerInterface>;
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
  /**
   * Asks each environment for its `global_post_process_and_metrics` after the rollout and hands over their metrics
   * (src/scenario/environment-metrics.ts); they are never part of the result.
   */
  onEnvironmentMetrics?: (reports: EnvironmentMetrics[]) => void;
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
  /**
   * The policy's own counters for this run (a model's `lab/prefilled_tokens`, `lab/reused_tokens`), read once the
   * rollout is over and added to the result's metrics; every key starts with `lab/`.
   */
  metrics?: () => Record<string, number>;
}

export interface PreparedScenario {
  /** The datum specs, the scenario's own or generated, checked; not yet tokenized. */
  data: DatumSpec[];
  taskToEnv: Record<string, EnvironmentInterface>;
  environments: Record<string, EnvironmentDefinition>;
  /**
   * Whether prompts are rendered with the active tokenizer's own chat template (`rendersOwnTemplate`): a real
   * tokenizer's, the scenario's `tokenizer` or a model policy's own. The byte-level tokenizer uses the built-in ChatML.
   */
  realTemplate?: boolean;
}

/**
 * The model id whose chat template renders a scenario's prompts (its `tokenizer` key), or null for the built-in
 * ChatML one (no key, or a byte-level built-in).
 */
export function activeTokenizerSpec(scenario: Pick<Scenario, "tokenizer">): string | null {
  const spec = scenario.tokenizer ?? null;
  return spec === null || BYTE_LEVEL_SPECS.includes(spec) ? null : spec;
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

/** What a scenario may name: every environment the lookup knows, or the built-in ones when it does not say. */
function knownEnvironments(lookup: EnvironmentLookup): string {
  const names = lookup.names?.();
  return names ? `expected one of: ${names.join(", ")}` : `built in: ${BUILTIN_ENVIRONMENTS.map((e) => e.name).join(", ")}`;
}

/** Builds the environments and the dataset (once: a remote environment's dataset comes from its server). */
export async function prepareScenario(
  scenario: Scenario,
  lookup: EnvironmentLookup = findEnvironment,
  sampleLimit?: SampleLimit,
  realTemplate: boolean = activeTokenizerSpec(scenario) !== null,
): Promise<PreparedScenario> {
  checkSampleCount(scenario, sampleLimit);
  // Keyed by the scenario's task names: objects without a prototype, so no task name ("constructor", "toString")
  // finds anything its scenario did not put there.
  const taskToEnv: Record<string, EnvironmentInterface> = Object.create(null);
  const environments: Record<string, EnvironmentDefinition> = Object.create(null);
  for (const [task, spec] of Object.entries(scenario.envs)) {
    const definition = lookup(spec.env);
    if (!definition) throw problem(`envs.${task}.env`, `unknown environment '${spec.env}' (${knownEnvironments(lookup)})`);
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
        // A real template renders the prompts: the built-in environments then give raw chat messages.
        ...(realTemplate ? { prompts: "messages" as const } : {}),
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

  return { data, taskToEnv, environments, realTemplate };
}

/**
 * A datum's initial message log: its `message_log`, or its raw `messages` (and `tools`) rendered with the active
 * chat template (`add_generation_prompt: true`) into one `user` message, as the reference datasets pre-render
 * their prompts: the tokenizer's own template when `realTemplate`, else the built-in ChatML one.
 */
export function initialMessages(d: DatumSpec, tokenizer: TokenizerInterface, realTemplate: boolean): { role: string; content: string }[] {
  if (d.message_log) return d.message_log;
  const messages = d.messages!;
  const tools = d.tools ?? null;
  const text =
    realTemplate && tokenizer.applyChatTemplate
      ? tokenizer.applyChatTemplate(messages, { tools, addGenerationPrompt: true })
      : renderChatTemplate(messages, { tools: tools as ToolSpec[] | null, addGenerationPrompt: true });
  return [{ role: "user", content: text }];
}

/** The input batch: every message tokenized with the policy's tokenizer. */
export function inputBatchFor(prepared: PreparedScenario, tokenizer: TokenizerInterface = byteLevelTokenizer): BatchedDataDict {
  const rows = prepared.data.map((d, position) => {
    const log: Message[] = initialMessages(d, tokenizer, prepared.realTemplate ?? false).map((m) => ({
      role: m.role,
      content: m.content,
      token_ids: tokenizer.encode(m.content),
    }));
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

/**
 * Builds the scenario's policy; a text policy with the tokenizer already loaded, a model or server policy before
 * `prepared` (its own tokenizer renders the prompts).
 */
async function buildPolicy(
  scenario: Scenario,
  prepared: PreparedScenario | null,
  options: RunScenarioOptions,
  tokenizer: TokenizerInterface = byteLevelTokenizer,
): Promise<LoadedPolicy> {
  const policy = scenario.policy;
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
      const idxs = prepared!.data.map((d, position) => d.idx ?? position);
      return { generation: replayPolicy(saved, idxs, tokenizer), tokenizer };
    }
    case "model":
      if (!options.modelPolicy) throw problem("policy.kind", "this runner has no model backend for policy kind 'model'");
      try {
        return await options.modelPolicy(policy);
      } catch (e) {
        // A model id that names nothing (an unknown built-in) is the scenario's mistake, found before anything loads.
        if (e instanceof UnknownModelError) throw problem("policy.model", e.message);
        throw e;
      }
    case "server":
      if (!options.serverPolicy) throw problem("policy.kind", "this runner has no inference-server backend for policy kind 'server'");
      return options.serverPolicy(policy);
  }
}

/** The text policies' tokenizer: the one the scenario's `tokenizer` names, else the byte-level one. */
async function textPolicyTokenizer(scenario: Scenario, options: RunScenarioOptions): Promise<TokenizerInterface> {
  const spec = scenario.tokenizer;
  if (spec === undefined || BYTE_LEVEL_SPECS.includes(spec) || scenario.policy.kind === "model" || scenario.policy.kind === "server") return byteLevelTokenizer;
  if (!options.textTokenizer) throw problem("tokenizer", `this runner cannot load the tokenizer '${spec}'`);
  try {
    return await options.textTokenizer(spec);
  } catch (e) {
    throw problem("tokenizer", (e as Error).message);
  }
}

/**
 * Whether a loaded tokenizer renders prompts with its own chat template: every tokenizer that has one but the
 * byte-level one, which (as `scenario-format.md` says) uses the built-in ChatML template. A model folder of the lab's byte-level
 * vocabulary (`builtin:tiny`, a copy of it in a local folder, `builtin:trained` with byte-pair merges of its own on
 * top of it) gives each byte and marker the built-in tokenizer's id, and is told apart by that, not by its name.
 */
export function rendersOwnTemplate(tokenizer: TokenizerInterface): boolean {
  if (tokenizer === byteLevelTokenizer || !tokenizer.applyChatTemplate) return false;
  // A model without a chat template (a base model's tokenizer_config.json has none) keeps the built-in ChatML.
  try {
    tokenizer.applyChatTemplate([{ role: "user", content: "x" }], { addGenerationPrompt: true });
  } catch {
    return false;
  }
  return !LAB_VOCABULARY_PROBES.every((probe) => {
    const ours = tokenizer.encode(probe);
    const bytes = byteLevelTokenizer.encode(probe);
    return ours.length === bytes.length && ours.every((id, i) => id === bytes[i]);
  });
}

/**
 * Pieces that no merge can change (one byte each, or a marker): a tokenizer that gives each of them the byte-level
 * id speaks the lab's vocabulary, whatever merges it adds on top.
 */
const LAB_VOCABULARY_PROBES = ["A", "b", "7", " ", "\n", "{", "~", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>"];

/** Runs one scenario to its result JSON. */
export async function runScenario(scenario: Scenario, options: RunScenarioOptions = {}): Promise<RolloutResultJson> {
  let structuredCfg;
  try {
    structuredCfg = resolveStructuredToolUse(scenario.structured ?? null);
  } catch (e) {
    throw problem("structured", (e as Error).message);
  }
  const override = options.policyOverride;
  // The tokenizer comes first: the prompts are rendered with its chat template (a model's own included).
  let built: LoadedPolicy | null = null;
  let prepared: PreparedScenario;
  if (override !== undefined) {
    built = typeof override === "function" ? override(await textPolicyTokenizer(scenario, options)) : override;
    prepared = await prepareScenario(scenario, options.environments, options.sampleLimit, rendersOwnTemplate(built.tokenizer));
  } else if (scenario.policy.kind === "model" || scenario.policy.kind === "server") {
    checkSampleCount(scenario, options.sampleLimit);
    built = await buildPolicy(scenario, null, options);
    try {
      prepared = await prepareScenario(scenario, options.environments, options.sampleLimit, rendersOwnTemplate(built.tokenizer));
    } catch (e) {
      await built.dispose?.();
      throw e;
    }
  } else {
    const tokenizer = await textPolicyTokenizer(scenario, options);
    prepared = await prepareScenario(scenario, options.environments, options.sampleLimit, rendersOwnTemplate(tokenizer));
    built = await buildPolicy(scenario, prepared, options, tokenizer);
  }
  const { generation, tokenizer, dispose, metrics } = options.wrapPolicy ? options.wrapPolicy(built) : built;
  try {
    // The policy's tokenizer (a model's own, the scenario's `tokenizer`, or the byte-level one) tokenizes the prompts.
    const result = await rollout(scenario, prepared, inputBatchFor(prepared, tokenizer), generation, tokenizer, structuredCfg, options);
    if (metrics) Object.assign(result.metrics, policyMetrics(metrics()));
    if (options.onEnvironmentMetrics) options.onEnvironmentMetrics(await environmentMetrics(result, prepared.taskToEnv));
    return result;
  } finally {
    await dispose?.();
  }
}

/** A policy's counters, checked to stay under the prefix the result format leaves to the lab. */
function policyMetrics(metrics: Record<string, number>): Record<string, number> {
  for (const key of Object.keys(metrics)) {
    if (!key.startsWith("lab/")) throw new Error(`policy metric '${key}' must start with 'lab/' (scenario-format.md, Result)`);
  }
  return metrics;
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
