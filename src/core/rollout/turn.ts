/** The pieces of one turn that both rollout paths share. */

import { assessAssistantTurn, popEnvFlags, type InvalidActionPenaltyConfig, invalidActionEnabled } from "../assessment/invalid-action.js";
import type { Violation } from "../assessment/violations.js";
import { observationText, structuredThinkingStyle, type StructuredToolUseConfig } from "../protocol/structured.js";
import type { EnvMessage, Message, Metadata, TokenizerInterface } from "../types.js";
import type { TerminationReason } from "./events.js";

export interface ObservationArgs {
  observation: EnvMessage;
  assistantIds: readonly number[];
  inputLength: number;
  maxSeqLen: number;
  tokenizer: TokenizerInterface;
  structuredCfg: StructuredToolUseConfig | null | undefined;
}

/**
 * Tokenizes an observation (wrapped when the structured protocol is on) and applies the `>=` rule: when prompt,
 * response and observation reach `max_seq_len`, the observation's tokens are cut to the room left (possibly none)
 * and the context counts as truncated. `content` stays the full, raw observation text.
 */
export function observationMessage(args: ObservationArgs): { message: Message; truncatedContext: boolean } {
  const { observation, assistantIds, inputLength, maxSeqLen, tokenizer, structuredCfg } = args;
  const text = observationText(observation.content, structuredCfg, {
    assistantText: structuredCfg?.envelope === "template" ? tokenizer.decode(assistantIds) : "",
    generationPrefill: tokenizer.generationPrefill,
    tokenizer,
  });
  let ids = tokenizer.encode(text);
  let truncatedContext = false;
  if (ids.length + assistantIds.length + inputLength >= maxSeqLen) {
    ids = ids.slice(0, Math.max(0, maxSeqLen - (assistantIds.length + inputLength)));
    truncatedContext = true;
  }
  return { message: { role: observation.role, content: observation.content, token_ids: ids }, truncatedContext };
}

export interface TurnAssessment {
  invalid: boolean;
  malformedThinking: boolean;
  violations: Violation[];
  /** The environment's metadata without its verdict keys (always removed, as in the reference). */
  metadata: Metadata;
}

/** Assesses the assistant turn (when enabled, with no tool registry: decision 10) and pops the env flags. */
export function assessTurn(
  assistantText: string,
  metadata: Metadata,
  invalidActionCfg: InvalidActionPenaltyConfig | null | undefined,
  structuredCfg: StructuredToolUseConfig | null | undefined,
): TurnAssessment {
  if (!invalidActionCfg || !invalidActionEnabled(invalidActionCfg)) return { invalid: false, malformedThinking: false, violations: [], metadata: popEnvFlags(metadata) };
  const v = assessAssistantTurn(assistantText, invalidActionCfg, metadata, structuredThinkingStyle(structuredCfg));
  return { invalid: v.invalid_action, malformedThinking: v.malformed_thinking, violations: v.violations, metadata: popEnvFlags(metadata) };
}

/** When several causes end a sample on one turn, the first of this order wins (decision 6). */
export function terminationReason(causes: {
  error?: boolean;
  terminated?: boolean;
  truncatedContext?: boolean;
  truncatedResponse?: boolean;
  maxTurns?: boolean;
  cancelled?: boolean;
}): TerminationReason | null {
  if (causes.error) return "error";
  if (causes.terminated) return "terminated";
  if (causes.truncatedContext) return "truncated_context";
  if (causes.truncatedResponse) return "truncated_response";
  if (causes.cancelled) return "cancelled";
  if (causes.maxTurns) return "max_turns";
  return null;
}

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export function clock(): () => number {
  const start = performance.now();
  return () => Math.round((performance.now() - start) * 1000) / 1000;
}

export const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
export const mean = (xs: readonly number[]) => (xs.length ? sum(xs) / xs.length : Number.NaN);
export const max = (xs: readonly number[]) => (xs.length ? Math.max(...xs) : Number.NaN);
export const min = (xs: readonly number[]) => (xs.length ? Math.min(...xs) : Number.NaN);
