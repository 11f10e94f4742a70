/**
 * `run_multi_turn_rollout`: the synchronous, lock-step batched rollout (upstream-rollouts.md §2.4, with the
 * derived library's additions of fork-additions.md §5.3).
 *
 * Faithful to the sync path: one batched generation per turn over the active set, one `step` per task group,
 * D3 (a response cut at its token limit is recorded in `truncated` but the sample goes on, unless
 * `endOnResponseTruncation`), D5 (a null `next_stop_strings` entry resets the stop strings), D6/D7 metric
 * semantics (a sample leaving the active set counts as terminated), D11 (`idx` is the input's), D12 (the output
 * `stop_strings` are each sample's last ones) and the fork's 13 metric keys plus the penalty keys.
 *
 * Deliberate differences (the specs' README decisions):
 * 1. The input batch is never mutated (BUG-S2): the rollout works on deep copies.
 * 2. Environment stop strings always reach the generator (BUG-S1), per sample.
 * 3. The generator gets min(maxNewTokens, maxSeqLen − prompt) new tokens, so the observation cut never needs
 *    the reference's assert (D4).
 * 4. A generation or environment error ends only the affected samples, with `termination: "error"` and the
 *    error text; they count neither as terminated nor as max-turns-reached. `failFast` rejects instead.
 * 6. Every sample gets a `termination` reason.
 */

import { LabError } from "../errors.js";
import { BatchedDataDict, type Columns } from "../batch.js";
import type { Violation } from "../assessment/violations.js";
import { invalidActionEnabled } from "../assessment/invalid-action.js";
import { cloneData } from "../clone.js";
import type { Message, MessageLog, Metadata } from "../types.js";
import { isAbortError } from "../errors.js";
import type { RolloutEvent, TerminationReason } from "./events.js";
import { ContextRows } from "./context-rows.js";
import { buildGenerationInput, generateResponses } from "./generate.js";
import { checkTimeoutMs, DEFAULT_MAX_ROLLOUT_TURNS, type RolloutOptions } from "./options.js";
import { stepEnvironments } from "./rewards.js";
import { AssessmentTally, assessmentMetrics, episodeMetrics, rolloutStartEvent, tokenRewardMetrics } from "./tally.js";
import { assessTurn, clock, errorText, observationMessage, terminationReason } from "./turn.js";

export interface SyncRolloutArgs extends RolloutOptions {
  inputBatch: BatchedDataDict;
}

export type RolloutResult = [BatchedDataDict, Record<string, unknown>];

export class RolloutFailure extends LabError {
  override name = "RolloutFailure";
  override readonly code = "rollout_failed";
}

export async function runMultiTurnRollout(args: SyncRolloutArgs): Promise<RolloutResult> {
  const { policyGeneration, tokenizer, taskToEnv, maxSeqLen, inputBatch, signal, pause } = args;
  const maxTurns = args.maxRolloutTurns ?? DEFAULT_MAX_ROLLOUT_TURNS;
  const detectInvalid = invalidActionEnabled(args.invalidActionCfg);
  const now = clock();
  const emit = (event: RolloutEvent) => args.onEvent?.(event);
  // Per-turn events are made only for a listener (a rollout without one makes tens of thousands for nobody).
  const listening = args.onEvent !== undefined;

  checkTimeoutMs("envStepTimeoutMs", args.envStepTimeoutMs);
  const B = inputBatch.size;
  if (B === 0) throw new RolloutFailure("cannot run a rollout on an empty batch");
  const columns = cloneData(inputBatch.data);
  const logs = columns.message_log as MessageLog[];
  const infos = columns.extra_env_info as Metadata[];
  const tasks = columns.task_name as string[];
  const idxs = (columns.idx as number[] | undefined) ?? Array.from({ length: B }, (_, i) => i);
  const stopStrings = (columns.stop_strings as (string[] | null)[] | undefined) ?? new Array(B).fill(null);

  const totalRewards = new Array<number>(B).fill(0);
  // Keyed by the environment's reward names: a Map, so a name such as "constructor" is a name like any other.
  let multiRewards: Map<string, number[]> | null = null;
  const turnCounts = new Array<number>(B).fill(0);
  const tokenCounts = new Array<number>(B).fill(0);
  const assistantTokens = new Array<number>(B).fill(0);
  const envTokens = new Array<number>(B).fill(0);
  const terminated = new Array<boolean>(B).fill(false);
  const truncated = new Array<boolean>(B).fill(false);
  const maxTurnsReached = new Array<boolean>(B).fill(false);
  const termination = new Array<TerminationReason | null>(B).fill(null);
  const errors = new Array<string | null>(B).fill(null);
  const assessments = detectInvalid ? Array.from({ length: B }, () => new AssessmentTally()) : [];
  // The reference counts violations by type on one dict for the whole rollout: its metric keys follow their first
  // occurrence, turn by turn, not sample by sample (fork-additions §5.3).
  const violationCounts: Record<string, number> = {};

  // Each sample's context as the policy is given it, kept from turn to turn (only what is new is added).
  const contexts = new ContextRows(tokenizer.padTokenId);
  const endSample = (g: number, reason: TerminationReason, error: string | null = null) => {
    contexts.release(g);
    policyGeneration.releaseSamples?.([g]);
    termination[g] = reason;
    errors[g] = error;
    emit({ type: "sample_end", t: now(), sample: g, idx: idxs[g]!, termination: reason, error, totalReward: totalRewards[g]!, turns: turnCounts[g]! });
  };
  const fail = (g: number, error: string) => {
    if (args.failFast) throw new RolloutFailure(`sample ${g} (idx ${idxs[g]}): ${error}`);
    endSample(g, "error", error);
  };

  emit(rolloutStartEvent("sync", now(), { message_log: logs, task_name: tasks, extra_env_info: infos }, idxs, stopStrings, { maxRolloutTurns: maxTurns, maxSeqLen }));

  let active = Array.from({ length: B }, (_, i) => i);
  let cancelled = false;
  try {
    for (let turn = 0; turn < maxTurns && active.length > 0; turn++) {
      await pause?.wait(signal);
      if (signal?.aborted) {
        cancelled = true;
        break;
      }
      const activeLogs = active.map((g) => logs[g]!);
      const input = buildGenerationInput(
        activeLogs,
        active.map((g) => stopStrings[g]!),
        { padTokenId: tokenizer.padTokenId, maxSeqLen, maxNewTokens: args.maxNewTokens, sampleIds: active, turns: active.map(() => turn), contexts },
      );
      if (listening) active.forEach((g, i) => emit({ type: "turn_start", t: now(), sample: g, turn, inputTokens: input.input_lengths[i]! }));

      let generated: Awaited<ReturnType<typeof generateResponses>>;
      try {
        generated = await generateResponses({
          policyGeneration,
          generationInputData: input,
          batch: new BatchedDataDict({ message_log: activeLogs, stop_strings: active.map((g) => stopStrings[g]!) }),
          tokenizer,
          inputLengths: input.input_lengths,
          includeLogprobs: true,
          greedy: args.greedy ?? false,
          structuredCfg: args.structuredCfg ?? null,
          options: {
            signal,
            // Token events only for a listener: without one, a policy need not turn each token into text.
            onToken: args.onEvent
              ? (row, tokenId, text, detail) =>
                  emit({ type: "token", t: now(), sample: active[row]!, turn, tokenId, text, ...(detail ? { detail } : {}) })
              : undefined,
          },
        });
      } catch (e) {
        if (isAbortError(e, signal)) {
          cancelled = true;
          break;
        }
        for (const g of active) fail(g, `generation failed: ${errorText(e)}`);
        active = [];
        break;
      }
      const [newBatch, genIds, genMetrics] = generated;
      const responseTruncated = genMetrics._response_truncated ?? active.map(() => false);
      const rowErrors = genMetrics._row_errors ?? active.map(() => null);

      // Samples whose generation failed leave now; the others go on to the environment.
      const stepping: number[] = [];
      active.forEach((g, i) => {
        if (rowErrors[i]) return fail(g, `generation failed: ${rowErrors[i]}`);
        logs[g] = (newBatch.get("message_log") as MessageLog[])[i]!;
        if (responseTruncated[i]) truncated[g] = true;
        assistantTokens[g]! += genIds[i]!.length;
        tokenCounts[g]! += genIds[i]!.length;
        stepping.push(i);
        if (listening) emit({ type: "assistant_message", t: now(), sample: g, turn, message: logs[g]!.at(-1)!, truncated: Boolean(responseTruncated[i]) });
      });

      const steps = await stepEnvironments(
        new BatchedDataDict({
          message_log: stepping.map((i) => logs[active[i]!]!),
          extra_env_info: stepping.map((i) => infos[active[i]!]!),
          task_name: stepping.map((i) => tasks[active[i]!]!),
        }),
        taskToEnv,
        { timeoutMs: args.envStepTimeoutMs, sampleIds: stepping.map((i) => active[i]!) },
      );

      const continuing: number[] = [];
      stepping.forEach((i, j) => {
        const g = active[i]!;
        const step = steps[j]!;
        if (!step.ok) return fail(g, step.error);
        if (step.rewardComponents) {
          multiRewards ??= new Map();
          for (const [name, value] of Object.entries(step.rewardComponents)) {
            let column = multiRewards.get(name);
            if (!column) multiRewards.set(name, (column = new Array<number>(B).fill(0)));
            column[g]! += value;
          }
        }
        totalRewards[g]! += step.reward;

        const assistant = logs[g]!.at(-1)!;
        const verdict = assessTurn(assistant.content, step.metadata, args.invalidActionCfg, args.structuredCfg);
        if (detectInvalid) {
          assessments[g]!.add(verdict);
          for (const v of verdict.violations) violationCounts[v.type] = (violationCounts[v.type] ?? 0) + 1;
          if (verdict.violations.length) stampViolations(logs[g]!, verdict.violations);
        }

        const { message, truncatedContext } = observationMessage({
          observation: step.observation,
          assistantIds: genIds[i]!,
          inputLength: input.input_lengths[i]!,
          maxSeqLen,
          tokenizer,
          structuredCfg: args.structuredCfg,
        });
        logs[g]!.push(message); // the log is the rollout's own since this turn's generation (no one else holds it)
        envTokens[g]! += message.token_ids.length;
        tokenCounts[g]! += message.token_ids.length;
        turnCounts[g]! += 1;
        if (truncatedContext) truncated[g] = true;

        const endsOnResponse = Boolean(args.endOnResponseTruncation && responseTruncated[i]);
        const done = truncatedContext || step.terminated || endsOnResponse;
        if (!done) {
          stopStrings[g] = step.nextStopStrings; // D5: a null entry resets in sync.
          if (verdict.metadata !== null) infos[g] = verdict.metadata;
          continuing.push(g);
        }
        if (listening) emit({
          type: "env_step",
          t: now(),
          sample: g,
          turn,
          observation: message,
          reward: step.reward,
          rewardComponents: step.rewardComponents,
          terminated: step.terminated,
          truncatedContext,
          violations: verdict.violations,
          metadata: done ? infos[g]! : (verdict.metadata ?? infos[g]!),
          stopStrings: stopStrings[g] ?? null,
        });
        if (done) {
          terminated[g] = true;
          endSample(g, terminationReason({ terminated: step.terminated, truncatedContext, truncatedResponse: endsOnResponse })!);
        }
      });
      active = continuing;
    }
  } catch (e) {
    emit({ type: "rollout_error", t: now(), error: errorText(e) });
    throw e;
  }
  for (const g of active) {
    if (cancelled) endSample(g, "cancelled");
    else {
      maxTurnsReached[g] = true;
      endSample(g, "max_turns");
    }
  }
  cancelled ||= Boolean(signal?.aborted) && termination.some((t) => t === "cancelled");

  const out: Columns = {
    ...columns,
    message_log: logs,
    extra_env_info: infos,
    ...(columns.stop_strings !== undefined ? { stop_strings: stopStrings } : {}),
    total_reward: totalRewards,
    truncated,
  };
  // (No reward is named `__proto__`: the step check refuses that name.)
  // (Set in the step callbacks: TypeScript's narrowing does not see it.)
  const rewardColumns = multiRewards as Map<string, number[]> | null;
  if (rewardColumns) for (const [name, column] of rewardColumns) out[name] = column;
  if (detectInvalid) {
    out.invalid_action_count = assessments.map((a) => a.invalidActions);
    out.malformed_thinking_count = assessments.map((a) => a.malformedThinking);
  }
  out.termination = termination;
  out.error = errors;

  // The sync path's key order: episode, assessment, then tokens and rewards.
  const metrics: Record<string, unknown> = {
    ...episodeMetrics(turnCounts, terminated, truncated, maxTurnsReached),
    ...(detectInvalid ? assessmentMetrics(assessments, violationCounts) : {}),
    ...tokenRewardMetrics(tokenCounts, assistantTokens, envTokens, totalRewards),
  };
  if (cancelled) metrics["lab/cancelled_samples"] = termination.filter((t) => t === "cancelled").length;

  const batch = new BatchedDataDict(out);
  emit({ type: "rollout_end", t: now(), batch: out, metrics, partial: cancelled });
  return [batch, metrics];
}

function stampViolations(log: MessageLog, violations: Violation[]): void {
  const last = log.at(-1) as Message;
  log[log.length - 1] = { ...last, invalid_action_violations: violations };
}
