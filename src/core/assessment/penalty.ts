/** Penalty arithmetic: routing by locus, the step schedule, rates and the trainer's reward penalty (§4.6–§4.7). */

import { pyRepr } from "../python/repr.js";
import type { InvalidActionPenaltyConfig, PenaltyMode } from "./invalid-action.js";
import { isInvalidActionType, isThinkingType, type Violation } from "./violations.js";
import { pyFloat, pyGet, pyInt } from "../python/config.js";
import { pyTruthy } from "../protocol/structured.js";

export function violationsAtLocus(
  violations: readonly Violation[],
  mode: PenaltyMode | string | null | undefined,
  locus: string,
): Violation[] {
  if (mode === null || mode === undefined || mode === "auto") return violations.filter((v) => v.locus === locus);
  if (mode === "both") return [...violations];
  if (mode === "reward" || mode === "advantage") return mode === locus ? [...violations] : [];
  throw new Error(`Unknown penalty_mode ${pyRepr(mode)}`);
}

export function basePenaltyForType(cfg: InvalidActionPenaltyConfig, type: string): number {
  return pyFloat(pyGet(cfg, isThinkingType(type) ? "malformed_thinking_penalty" : "invalid_action_penalty", 0.0));
}

export function penaltyScaleAtStep(cfg: InvalidActionPenaltyConfig, step: number | null | undefined): number {
  const schedule = cfg.penalty_step_scale;
  if (!schedule || Object.keys(schedule).length === 0) return 1.0;
  const start = pyFloat(pyGet(schedule, "start", 1.0));
  if (step === null || step === undefined) return start;
  const kind = pyGet(schedule, "schedule", "constant");
  if (kind === "constant") return start;
  if (kind === "linear") {
    const end = pyFloat(pyGet(schedule, "end", start));
    const n = pyInt(pyGet(schedule, "steps", 0));
    if (n <= 0) return end;
    return start + (end - start) * Math.min(Math.max(step / n, 0), 1);
  }
  throw new Error(`Unknown penalty_step_scale schedule ${pyRepr(kind)}`);
}

export function violationPenalty(cfg: InvalidActionPenaltyConfig, v: Violation, step?: number | null): number {
  // The severity stamped at rollout time counts; the config's weights are not re-read.
  return basePenaltyForType(cfg, v.type) * v.severity * penaltyScaleAtStep(cfg, step);
}

interface MessageWithViolations {
  invalid_action_violations?: readonly Violation[] | null;
}

export function sampleLocusPenalty(
  messageLog: readonly MessageWithViolations[],
  cfg: InvalidActionPenaltyConfig,
  locus = "reward",
  step: number | null = null,
): number {
  let total = 0;
  for (const message of messageLog) {
    const violations = message.invalid_action_violations;
    if (!violations || violations.length === 0) continue;
    for (const v of violationsAtLocus(violations, cfg.penalty_mode, locus)) total += violationPenalty(cfg, v, step);
  }
  return total;
}

/** Per-message rates: `num_assistant_messages`, the two `*_msg_rate`s and `violation_rate/<type>`. */
export function violationRateMetrics(counts: Record<string, number>, numAssistantMessages: number): Record<string, number> {
  const d = Math.max(numAssistantMessages, 1);
  let invalid = 0;
  let thinking = 0;
  for (const [type, n] of Object.entries(counts)) {
    if (isInvalidActionType(type)) invalid += n;
    if (isThinkingType(type)) thinking += n;
  }
  const metrics: Record<string, number> = {
    num_assistant_messages: numAssistantMessages,
    invalid_action_msg_rate: invalid / d,
    malformed_thinking_msg_rate: thinking / d,
  };
  for (const [type, n] of Object.entries(counts)) metrics[`violation_rate/${type}`] = n / d;
  return metrics;
}

export interface PenaltyBatch {
  total_reward: number[];
  unshaped_total_reward?: number[];
  invalid_action_count?: number[];
  malformed_thinking_count?: number[];
  message_log?: readonly (readonly MessageWithViolations[])[];
  [key: string]: unknown;
}

/**
 * The trainer's `apply_invalid_action_penalty`: returns a new batch (the input is left as it was) whose
 * `total_reward` is shaped and whose `unshaped_total_reward` keeps the raw one. Graded path when the batch has
 * message logs, legacy counts path otherwise.
 */
export function applyInvalidActionPenalty(
  batch: PenaltyBatch,
  cfg: InvalidActionPenaltyConfig | null | undefined,
  step: number | null = null,
): PenaltyBatch {
  if (!cfg || !pyTruthy(pyGet(cfg, "enabled", false))) return batch;
  const out: PenaltyBatch = { ...batch };
  out.unshaped_total_reward = batch.unshaped_total_reward ?? [...batch.total_reward];
  const floor = cfg.reward_floor;
  const clamp = (r: number) => (floor === null || floor === undefined ? r : Math.max(r, Number(floor)));
  if (batch.message_log !== undefined) {
    out.total_reward = batch.total_reward.map((r, i) =>
      clamp(r - sampleLocusPenalty(batch.message_log![i] ?? [], cfg, "reward", step)),
    );
    return out;
  }
  const missing = ["invalid_action_count", "malformed_thinking_count"].filter((k) => batch[k] === undefined);
  if (missing.length) {
    throw new Error(
      `invalid_action_penalty is enabled but the rollout did not produce ${pyRepr(missing)}. The penalty config must be threaded to the rollout (run_multi_turn_rollout / run_async_multi_turn_rollout via invalid_action_cfg) so verdict counts are collected.`,
    );
  }
  const ia = pyFloat(pyGet(cfg, "invalid_action_penalty", 0.0));
  const mt = pyFloat(pyGet(cfg, "malformed_thinking_penalty", 0.0));
  if (!(ia >= 0 && mt >= 0)) throw new Error("AssertionError: invalid-action penalties must be >= 0");
  out.total_reward = batch.total_reward.map((r, i) =>
    clamp(r - ia * batch.invalid_action_count![i]! - mt * batch.malformed_thinking_count![i]!),
  );
  return out;
}
