/** The parameters every rollout entry point takes: the seed's, then the lab's own (documented per field). */

import type { InvalidActionPenaltyConfig } from "../assessment/invalid-action.js";
import type { StructuredToolUseConfig } from "../protocol/structured.js";
import type { EnvironmentInterface, GenerationInterface, TokenizerInterface } from "../types.js";
import type { PauseController } from "./control.js";
import type { RolloutEvent } from "./events.js";

export interface RolloutOptions {
  policyGeneration: GenerationInterface;
  tokenizer: TokenizerInterface;
  taskToEnv: Record<string, EnvironmentInterface>;
  maxSeqLen: number;
  maxRolloutTurns?: number;
  greedy?: boolean;
  /** Enables the per-turn assessment and the count keys when `enabled`. */
  invalidActionCfg?: InvalidActionPenaltyConfig | null;
  /** A resolved structured block (`resolveStructuredToolUse`); null or absent = the fenced-text path. */
  structuredCfg?: StructuredToolUseConfig | null;

  /** Per-generation cap; the generator gets min(maxNewTokens, maxSeqLen − prompt) (decision 3). */
  maxNewTokens?: number;
  /** Decision 7: a response cut at its token limit ends the sample in sync too. Async always ends it. */
  endOnResponseTruncation?: boolean;
  /** Decision 4: the first generation or environment error rejects the whole rollout. */
  failFast?: boolean;
  /**
   * An environment step running longer fails its samples with an `error` termination (and its `StepContext.signal`
   * is aborted). An integer from 1 to `MAX_TIMEOUT_MS`; 0 or absent: no deadline.
   */
  envStepTimeoutMs?: number;
  /** Cancels the rollout: it resolves with the partial results, unfinished samples marked `cancelled`. */
  signal?: AbortSignal;
  /** Pauses between turns. */
  pause?: PauseController;
  /** Receives every event as it happens. */
  onEvent?: (event: RolloutEvent) => void;
}

export const DEFAULT_MAX_ROLLOUT_TURNS = 999999;

/**
 * The longest a timer can wait: `setTimeout` takes a signed 32-bit delay in ms, and a longer one fires after 1 ms
 * (so every step would "time out" at once). About 24.8 days.
 */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** Throws a RangeError naming the option when `value` is not a usable timeout (an integer from 0 to MAX_TIMEOUT_MS). */
export function checkTimeoutMs(name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_TIMEOUT_MS) {
    throw new RangeError(`${name}: expected an integer number of ms from 0 to ${MAX_TIMEOUT_MS}, got ${String(value)}`);
  }
}
