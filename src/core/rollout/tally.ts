/**
 * The bookkeeping both rollout paths share: a sample's assessment counts, the summary metrics built from the
 * per-sample counts, and the `rollout_start` event. Each path keeps its own loop (as the reference does) and
 * decides when a count moves (D6–D8); what the counts become is the same. Key order is each path's own, so the
 * metric groups are separate functions and each path joins them in its order.
 */

import { violationRateMetrics } from "../assessment/penalty.js";
import type { MessageLog, Metadata } from "../types.js";
import type { RolloutEvent } from "./events.js";
import type { TurnAssessment } from "./turn.js";
import { max, mean, min, sum } from "./turn.js";

/** One sample's invalid-action assessment, turn by turn. */
export class AssessmentTally {
  invalidActions = 0;
  malformedThinking = 0;
  /** Assistant messages assessed (the denominator of the per-message rates). */
  messages = 0;
  /** Violations by type. */
  readonly byType: Record<string, number> = {};

  add(verdict: TurnAssessment): void {
    this.invalidActions += Number(verdict.invalid);
    this.malformedThinking += Number(verdict.malformedThinking);
    this.messages += 1;
    for (const v of verdict.violations) this.byType[v.type] = (this.byType[v.type] ?? 0) + 1;
  }
}

export type AssessmentCounts = Pick<AssessmentTally, "invalidActions" | "malformedThinking" | "messages" | "byType">;

/**
 * `invalid_action_rate`, `malformed_thinking_rate` (samples with any) and the per-message violation rates, by type in
 * the order of `rolloutByType` (the sync path's one rollout-wide count), else of the samples' counts merged one
 * sample after another (the async path's).
 */
export function assessmentMetrics(samples: readonly AssessmentCounts[], rolloutByType?: Readonly<Record<string, number>>): Record<string, number> {
  let byType: Record<string, number> = {};
  if (rolloutByType) byType = { ...rolloutByType };
  else for (const s of samples) for (const [type, n] of Object.entries(s.byType)) byType[type] = (byType[type] ?? 0) + n;
  return {
    invalid_action_rate: mean(samples.map((s) => Number(s.invalidActions > 0))),
    malformed_thinking_rate: mean(samples.map((s) => Number(s.malformedThinking > 0))),
    ...violationRateMetrics(byType, sum(samples.map((s) => s.messages))),
  };
}

/** The episode metrics: turns, and how samples ended. */
export function episodeMetrics(turns: readonly number[], terminated: readonly boolean[], truncated: readonly boolean[], maxTurnsReached: readonly boolean[]) {
  return {
    total_turns: sum(turns),
    avg_turns_per_sample: mean(turns),
    max_turns_per_sample: max(turns),
    natural_termination_rate: mean(terminated.map(Number)),
    truncation_rate: mean(truncated.map(Number)),
    max_turns_reached_rate: mean(maxTurnsReached.map(Number)),
  };
}

/** The token and reward metrics, per sample. */
export function tokenRewardMetrics(totalTokens: readonly number[], genTokens: readonly number[], envTokens: readonly number[], rewards: readonly number[]) {
  return {
    mean_total_tokens_per_sample: mean(totalTokens),
    mean_gen_tokens_per_sample: mean(genTokens),
    max_gen_tokens_per_sample: max(genTokens),
    mean_env_tokens_per_sample: mean(envTokens),
    mean_total_reward: mean(rewards),
    max_total_reward: max(rewards),
    min_total_reward: min(rewards),
  };
}

/** The `rollout_start` event of a batch's columns. */
export function rolloutStartEvent(
  mode: "sync" | "async",
  t: number,
  columns: { message_log: readonly MessageLog[]; task_name: readonly string[]; extra_env_info?: readonly Metadata[] | undefined },
  idxs: readonly number[],
  stopStrings: readonly (string[] | null)[],
  limits: { maxRolloutTurns: number; maxSeqLen: number },
): RolloutEvent {
  return {
    type: "rollout_start",
    t,
    mode,
    samples: columns.task_name.map((task_name, sample) => ({
      sample,
      idx: idxs[sample]!,
      task_name,
      message_log: columns.message_log[sample]!,
      extra_env_info: (columns.extra_env_info?.[sample] ?? null) as Metadata,
      stop_strings: stopStrings[sample] ?? null,
    })),
    maxRolloutTurns: limits.maxRolloutTurns,
    maxSeqLen: limits.maxSeqLen,
  };
}
