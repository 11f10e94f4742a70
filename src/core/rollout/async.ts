/**
 * `run_sample_multi_turn_rollout` and `run_async_multi_turn_rollout` (+ the per-group variant): every sample runs
 * its own loop concurrently (upstream-rollouts.md §2.6–§2.7, fork-additions.md §5.4–§5.5).
 *
 * Faithful to the async path: turns are counted before generating (D8), one `step` per sample per turn (D2), a
 * response cut at its token limit ends the episode after that turn's step (D3), a null `next_stop_strings`
 * entry keeps the previous stop strings (D5), `terminated` is the last turn's environment flag (D6),
 * `max_turns_reached` is `turn_count >= max_rollout_turns` (D7), the output `stop_strings` are the input's (D12),
 * only `reward/*` components are stored (D13), and the fork's async metric keys (§5.5).
 *
 * Deliberate differences (the specs' README decisions):
 * 1. Inputs are never mutated.
 * 3. The generator gets min(maxNewTokens, maxSeqLen − prompt) new tokens.
 * 4. A generation error is not swallowed (BUG-A1): the sample ends with `termination: "error"` and the error
 *    text; its failed turn counts as the reference counts it (turn_count already incremented). An environment
 *    error ends the sample the same way. Other samples go on; `failFast` rejects the whole rollout instead.
 * 5. `idx` is the input's `idx` (QUIRK-A3).
 * 6. Every sample gets a `termination` reason.
 */

import { BatchedDataDict, type Columns } from "../batch.js";
import { invalidActionEnabled } from "../assessment/invalid-action.js";
import { cloneData } from "../clone.js";
import type { MessageLog, Metadata, TokenIds } from "../types.js";
import { isAbortError } from "../errors.js";
import type { RolloutEvent, TerminationReason } from "./events.js";
import { ContextRows } from "./context-rows.js";
import { asyncGenerateResponseForSampleTurn } from "./generate.js";
import { checkTimeoutMs, DEFAULT_MAX_ROLLOUT_TURNS, type RolloutOptions } from "./options.js";
import { stepSample } from "./rewards.js";
import { RolloutFailure, type RolloutResult } from "./sync.js";
import { AssessmentTally, assessmentMetrics, episodeMetrics, rolloutStartEvent, tokenRewardMetrics } from "./tally.js";
import { assessTurn, clock, errorText, observationMessage, terminationReason } from "./turn.js";

export interface SampleState {
  message_log: MessageLog;
  extra_env_info: Metadata;
  task_name: string;
  stop_strings: string[] | null;
  idx: number;
}

export interface FinalSampleState extends SampleState {
  total_reward: number;
  termination: TerminationReason;
  error: string | null;
  invalid_action_count?: number;
  malformed_thinking_count?: number;
  violation_counts?: Record<string, number>;
  num_assistant_messages?: number;
  [rewardComponent: `reward/${string}`]: number;
}

export interface SampleMetrics {
  turn_count: number;
  total_tokens: number;
  assistant_tokens: number;
  env_tokens: number;
  terminated: boolean;
  truncated: boolean;
  max_turns_reached: boolean;
  total_reward: number;
  turn_gen_tokens: number[];
  turn_input_tokens: number[];
  turn_total_tokens: number[];
  per_worker_token_counts: Record<string, number>;
}

export interface SampleRolloutArgs extends RolloutOptions {
  /** The sample's batch position (events use it). */
  sampleIdx: number;
  initialSampleState: SampleState;
  /** Shared clock of the whole rollout, so event times line up across samples. */
  now?: () => number;
}

export async function runSampleMultiTurnRollout(args: SampleRolloutArgs): Promise<[FinalSampleState, SampleMetrics]> {
  const { sampleIdx, tokenizer, maxSeqLen, signal, pause } = args;
  const maxTurns = args.maxRolloutTurns ?? DEFAULT_MAX_ROLLOUT_TURNS;
  const detectInvalid = invalidActionEnabled(args.invalidActionCfg);
  const now = args.now ?? clock();
  const emit = (event: RolloutEvent) => args.onEvent?.(event);
  // Per-turn events are made only for a listener (a rollout without one makes tens of thousands for nobody).
  const listening = args.onEvent !== undefined;
  const initial = cloneData(args.initialSampleState);

  let log = initial.message_log;
  let info = initial.extra_env_info;
  let stop = initial.stop_strings;
  const task = initial.task_name;
  let totalReward = 0;
  const rewardAcc: Record<string, number> = {};
  let turnCount = 0;
  let tokenCount = 0;
  let assistantTokens = 0;
  let envTokens = 0;
  let terminated = false;
  let truncated = false;
  let truncatedContext = false;
  let responseTruncated = false;
  let error: string | null = null;
  let cancelled = false;
  const turnGen: number[] = [];
  const turnInput: number[] = [];
  const turnTotal: number[] = [];
  const perWorker: Record<string, number> = {};
  const assessment = new AssessmentTally();

  // The sample's context as the policy is given it, kept from turn to turn (only what is new is added).
  const contexts = new ContextRows(tokenizer.padTokenId);
  const fail = (message: string) => {
    if (args.failFast) throw new RolloutFailure(`sample ${sampleIdx} (idx ${initial.idx}): ${message}`);
    error = message;
  };

  for (let turn = 0; turn < maxTurns; turn++) {
    if (terminated || truncated) break;
    if (pause) await pause.wait(signal);
    if (signal?.aborted) {
      cancelled = true;
      break;
    }
    turnCount += 1;
    if (listening) emit({ type: "turn_start", t: now(), sample: sampleIdx, turn, inputTokens: log.reduce((n, m) => n + m.token_ids.length, 0) });

    let gen: TokenIds;
    let inputLength: number;
    try {
      const [updated, genIds, inLen, metrics] = await asyncGenerateResponseForSampleTurn({
        policyGeneration: args.policyGeneration,
        sampleMessageLog: log,
        sampleStopStrings: stop,
        tokenizer,
        maxSeqLen,
        greedy: args.greedy ?? false,
        structuredCfg: args.structuredCfg ?? null,
        maxNewTokens: args.maxNewTokens,
        sampleId: sampleIdx,
        turn,
        contexts,
        options: {
          signal,
          // Token events only for a listener: without one, a policy need not turn each token into text.
          onToken: args.onEvent
            ? (_row, tokenId, text, detail) =>
                emit({ type: "token", t: now(), sample: sampleIdx, turn, tokenId, text, ...(detail ? { detail } : {}) })
            : undefined,
        },
      });
      log = updated;
      gen = genIds;
      inputLength = inLen;
      if (metrics._response_truncated?.[0]) {
        truncated = true;
        responseTruncated = true;
      }
      if (metrics.gen_leader_worker_idx !== undefined) {
        const worker = String(metrics.gen_leader_worker_idx);
        perWorker[worker] = (perWorker[worker] ?? 0) + gen.length;
      }
    } catch (e) {
      if (isAbortError(e, signal)) {
        cancelled = true;
        break;
      }
      fail(`generation failed: ${errorText(e)}`);
      break;
    }
    assistantTokens += gen.length;
    tokenCount += gen.length;
    turnGen.push(gen.length);
    turnInput.push(inputLength);
    turnTotal.push(inputLength + gen.length);
    if (listening) emit({ type: "assistant_message", t: now(), sample: sampleIdx, turn, message: log.at(-1)!, truncated: responseTruncated });

    const step = await stepSample(log, info, task, args.taskToEnv, { timeoutMs: args.envStepTimeoutMs, sampleIds: [sampleIdx] });
    if (!step.ok) {
      fail(step.error);
      break;
    }

    // The fork assesses right after the step, before accumulating rewards.
    const assistant = log.at(-1)!;
    const verdict = assessTurn(assistant.content, step.metadata, args.invalidActionCfg, args.structuredCfg);
    if (detectInvalid) {
      assessment.add(verdict);
      if (verdict.violations.length) log = [...log.slice(0, -1), { ...assistant, invalid_action_violations: verdict.violations }];
    }

    if (step.rewardComponents) {
      for (const [name, value] of Object.entries(step.rewardComponents)) rewardAcc[name] = (rewardAcc[name] ?? 0) + value;
    }
    totalReward += step.reward;
    terminated = step.terminated;

    const observed = observationMessage({
      observation: step.observation,
      assistantIds: gen,
      inputLength,
      maxSeqLen,
      tokenizer,
      structuredCfg: args.structuredCfg,
    });
    if (observed.truncatedContext) {
      truncated = true;
      truncatedContext = true;
    }
    log.push(observed.message); // the log is the sample's own since this turn's generation (no one else holds it)
    envTokens += observed.message.token_ids.length;
    tokenCount += observed.message.token_ids.length;
    if (!terminated && !truncated) {
      if (step.nextStopStrings !== null) stop = step.nextStopStrings; // D5: a null entry keeps them in async.
      if (verdict.metadata !== null) info = verdict.metadata;
    }
    if (listening) emit({
      type: "env_step",
      t: now(),
      sample: sampleIdx,
      turn,
      observation: observed.message,
      reward: step.reward,
      rewardComponents: step.rewardComponents,
      terminated,
      truncatedContext: observed.truncatedContext,
      violations: verdict.violations,
      metadata: info,
      stopStrings: stop,
    });
  }

  const maxTurnsReached = turnCount >= maxTurns;
  const termination = terminationReason({
    error: error !== null,
    terminated,
    truncatedContext,
    truncatedResponse: responseTruncated,
    cancelled,
    maxTurns: true,
  })!;
  args.policyGeneration.releaseSamples?.([sampleIdx]);
  emit({ type: "sample_end", t: now(), sample: sampleIdx, idx: initial.idx, termination, error, totalReward, turns: turnCount });

  const finalState: FinalSampleState = {
    message_log: log,
    extra_env_info: info,
    task_name: task,
    total_reward: totalReward,
    stop_strings: stop,
    idx: initial.idx,
    termination,
    error,
  };
  for (const [name, value] of Object.entries(rewardAcc)) finalState[name as `reward/${string}`] = value;
  if (detectInvalid) {
    finalState.invalid_action_count = assessment.invalidActions;
    finalState.malformed_thinking_count = assessment.malformedThinking;
    finalState.violation_counts = assessment.byType;
    finalState.num_assistant_messages = assessment.messages;
  }
  const sampleMetrics: SampleMetrics = {
    turn_count: turnCount,
    total_tokens: tokenCount,
    assistant_tokens: assistantTokens,
    env_tokens: envTokens,
    terminated,
    truncated,
    max_turns_reached: maxTurnsReached,
    total_reward: totalReward,
    turn_gen_tokens: turnGen,
    turn_input_tokens: turnInput,
    turn_total_tokens: turnTotal,
    per_worker_token_counts: perWorker,
  };
  return [finalState, sampleMetrics];
}

export interface AsyncRolloutArgs extends RolloutOptions {
  inputBatch: BatchedDataDict;
}

export async function runAsyncMultiTurnRollout(args: AsyncRolloutArgs): Promise<RolloutResult> {
  const { results, now } = await runAllSamples(args);
  const { batch, metrics } = assembleAsyncResults(results, args.inputBatch);
  metrics["timing/rollout/total"] = now() / 1000;
  const partial = results.some(([s]) => s.termination === "cancelled");
  args.onEvent?.({ type: "rollout_end", t: now(), batch: batch.data, metrics, partial });
  return [batch, metrics];
}

/** Runs every sample's loop concurrently; results come back in input order. */
async function runAllSamples(
  args: AsyncRolloutArgs,
): Promise<{ results: [FinalSampleState, SampleMetrics][]; now: () => number }> {
  const { inputBatch } = args;
  checkTimeoutMs("envStepTimeoutMs", args.envStepTimeoutMs);
  const B = inputBatch.size;
  if (B === 0) throw new RolloutFailure("cannot run a rollout on an empty batch");
  const now = clock();
  // With failFast, the first failure rejects at once: the other samples are cancelled and fall silent.
  const failed = new AbortController();
  const signal = args.signal ? AbortSignal.any([args.signal, failed.signal]) : failed.signal;
  const emit = (event: RolloutEvent) => {
    if (!failed.signal.aborted) args.onEvent?.(event);
  };
  const input = inputBatch.data;
  const idxs = (input.idx as number[] | undefined) ?? Array.from({ length: B }, (_, i) => i);
  const stops = (input.stop_strings as (string[] | null)[] | undefined) ?? new Array(B).fill(null);
  const columns = { message_log: input.message_log as MessageLog[], task_name: input.task_name as string[], extra_env_info: input.extra_env_info as Metadata[] | undefined };
  emit(rolloutStartEvent("async", now(), columns, idxs, stops, { maxRolloutTurns: args.maxRolloutTurns ?? DEFAULT_MAX_ROLLOUT_TURNS, maxSeqLen: args.maxSeqLen }));
  try {
    const results = await Promise.all(
      Array.from({ length: B }, (_, i) =>
        runSampleMultiTurnRollout({
          ...args,
          signal,
          onEvent: args.onEvent ? emit : undefined,
          now,
          sampleIdx: i,
          initialSampleState: {
            message_log: (input.message_log as MessageLog[])[i]!,
            extra_env_info: ((input.extra_env_info as Metadata[] | undefined)?.[i] ?? null) as Metadata,
            task_name: (input.task_name as string[])[i]!,
            stop_strings: stops[i] ?? null,
            idx: idxs[i]!,
          },
        }),
      ),
    );
    return { results, now };
  } catch (e) {
    emit({ type: "rollout_error", t: now(), error: errorText(e) });
    failed.abort();
    throw e;
  }
}

/** Builds the output batch and the fork's async metrics (§5.5) from per-sample results. */
export function assembleAsyncResults(
  results: readonly [FinalSampleState, SampleMetrics][],
  inputBatch: BatchedDataDict,
): { batch: BatchedDataDict; metrics: Record<string, unknown> } {
  const states = results.map((r) => r[0]);
  const sm = results.map((r) => r[1]);
  const out: Columns = {
    message_log: states.map((s) => s.message_log),
    extra_env_info: states.map((s) => s.extra_env_info),
    task_name: states.map((s) => s.task_name),
    total_reward: states.map((s) => s.total_reward),
    idx: states.map((s) => s.idx),
    truncated: sm.map((m) => m.truncated),
  };
  const componentKeys = [...new Set(states.flatMap((s) => Object.keys(s).filter((k) => k.startsWith("reward/"))))].sort();
  for (const key of componentKeys) out[key] = states.map((s) => (s[key as `reward/${string}`] as number | undefined) ?? 0);
  const detectInvalid = states.some((s) => s.invalid_action_count !== undefined);
  if (detectInvalid) {
    out.invalid_action_count = states.map((s) => s.invalid_action_count ?? 0);
    out.malformed_thinking_count = states.map((s) => s.malformed_thinking_count ?? 0);
  }
  out.termination = states.map((s) => s.termination);
  out.error = states.map((s) => s.error);
  for (const key of inputBatch.keys()) {
    if (!(key in out)) out[key] = cloneData(inputBatch.get(key));
  }

  // The async path's key order: episode, tokens and rewards, then assessment.
  const metrics: Record<string, unknown> = {
    ...episodeMetrics(
      sm.map((m) => m.turn_count),
      sm.map((m) => m.terminated),
      sm.map((m) => m.truncated),
      sm.map((m) => m.max_turns_reached),
    ),
    ...tokenRewardMetrics(
      sm.map((m) => m.total_tokens),
      sm.map((m) => m.assistant_tokens),
      sm.map((m) => m.env_tokens),
      sm.map((m) => m.total_reward),
    ),
  };
  if (detectInvalid) {
    const counts = states.map((s) => ({
      invalidActions: s.invalid_action_count ?? 0,
      malformedThinking: s.malformed_thinking_count ?? 0,
      messages: s.num_assistant_messages ?? 0,
      byType: s.violation_counts ?? {},
    }));
    Object.assign(metrics, assessmentMetrics(counts));
  }
  const perWorker: Record<string, number> = {};
  for (const m of sm) for (const [w, n] of Object.entries(m.per_worker_token_counts)) perWorker[w] = (perWorker[w] ?? 0) + n;
  metrics.per_worker_token_counts = perWorker;
  metrics["histogram/gen_tokens_length"] = sm.flatMap((m) => m.turn_gen_tokens);
  metrics["histogram/input_tokens_length"] = sm.flatMap((m) => m.turn_input_tokens);
  metrics["histogram/total_tokens_length"] = sm.flatMap((m) => m.turn_total_tokens);
  const cancelled = states.filter((s) => s.termination === "cancelled").length;
  if (cancelled) metrics["lab/cancelled_samples"] = cancelled;
  return { batch: new BatchedDataDict(out), metrics };
}

export interface RolloutGroupResult {
  groupIndex: number;
  batch: BatchedDataDict;
  metrics: Record<string, unknown>;
}

/**
 * `run_async_multi_turn_rollout_groups`: runs the whole batch (a full-batch barrier), then yields consecutive
 * groups of `numGenerations` samples, each with the metrics of that group alone.
 */
export async function* runAsyncMultiTurnRolloutGroups(
  args: AsyncRolloutArgs & { numGenerations: number },
): AsyncGenerator<RolloutGroupResult> {
  const n = args.numGenerations;
  const B = args.inputBatch.size;
  if (n <= 0 || B % n !== 0) {
    throw new Error(`num_generations must be positive and divide the batch size (${B}), got ${n}`);
  }
  const { results } = await runAllSamples(args);
  for (let g = 0; g < B / n; g++) {
    const { batch, metrics } = assembleAsyncResults(results.slice(g * n, (g + 1) * n), args.inputBatch.slice(g * n, (g + 1) * n));
    yield { groupIndex: g, batch, metrics };
  }
}
