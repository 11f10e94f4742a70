/**
 * What the environments that step one sample at a time share (the reference's `process_turn` per sample): the
 * batch step assembled from per-sample turns, and the pieces each turn and the metrics read the same way.
 */

import { pyStrip, type EnvironmentReturn, type EnvMessage, type Metadata } from "../core/index.js";

/** One sample's outcome of a step. */
export interface SampleTurn<M extends Metadata = Metadata> {
  observation: EnvMessage;
  reward: number;
  terminated: boolean;
  nextStopStrings: string[] | null;
  nextMetadata: M | null;
}

/** The batch's step: `processTurn` on each sample, in order, with its metadata (null where missing). */
export function stepEachSample(
  messageLogBatch: EnvMessage[][],
  metadata: Metadata[],
  processTurn: (log: EnvMessage[], metadata: Metadata) => SampleTurn,
): EnvironmentReturn {
  const turns = messageLogBatch.map((log, i) => processTurn(log, metadata[i] ?? null));
  return {
    observations: turns.map((t) => t.observation),
    metadata: turns.map((t) => t.nextMetadata),
    next_stop_strings: turns.map((t) => t.nextStopStrings),
    rewards: turns.map((t) => t.reward),
    terminateds: turns.map((t) => t.terminated),
    answers: null,
  };
}

export const environmentMessage = (content: string): EnvMessage => ({ role: "environment", content });

/** The last message's content, stripped, or "" when the last message is not the assistant's. */
export function lastAssistantText(log: readonly EnvMessage[]): string {
  const last = log[log.length - 1];
  return last && last.role === "assistant" ? pyStrip(last.content) : "";
}

/** The batch's `total_reward` column for `global_post_process_and_metrics`. */
export function batchTotalRewards(batch: Record<string, unknown[]>): number[] {
  // The reference defaults a missing total_reward to zeros, one per idx.
  return (batch.total_reward ?? (batch.idx ?? []).map(() => 0)) as number[];
}
