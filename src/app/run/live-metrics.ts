/**
 * The rollout's metrics while it runs: every key of the run's path (sync: the fork's 13 keys plus the penalty
 * keys, fork-additions.md §5.3; async: the fork's inline set of §5.5 with `per_worker_token_counts` and the three
 * `histogram/*` lists, no timing keys), computed with the reference formulas over the samples' current state in
 * the run model. Once the rollout has ended, its own metrics are returned unchanged.
 *
 * What each path counts, from the event stream alone:
 * - turns: sync counts env steps (a sample's turns with an `env_step`); async counts generation attempts (every
 *   `turn_start`, so a failed generation counts too) (D8);
 * - terminated: sync counts every sample that left the active set (ended by the environment, an observation
 *   overflow or a response truncation that ends it); async counts the environment's flag on the last step (D6);
 * - max turns reached: sync counts samples still active after the loop (`max_turns`); async counts
 *   `turn_count >= max_rollout_turns`, which may overlap with terminated or truncated (D7);
 * - truncated: a response cut at its token limit or an observation cut at `max_seq_len`, on any turn (both);
 * - tokens: generated tokens of every assistant message, observation tokens after the cut (both).
 */

import { episodeMetrics, isInvalidActionType, isThinkingType, tokenRewardMetrics, violationRateMetrics } from "../../core/index.js";
import { tokenCount, type RunModel, type SampleView, type TurnView } from "./run-model.js";

export type MetricValue = number | number[] | Record<string, number>;
export type Metrics = Record<string, MetricValue>;

export interface LiveMetricsOptions {
  /** Whether the run assesses invalid actions (the penalty keys exist only then). */
  invalidActionEnabled: boolean;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const mean = (xs: readonly number[]) => (xs.length ? sum(xs) / xs.length : Number.NaN);
const rate = (flags: readonly boolean[]) => mean(flags.map(Number));

/** Generated tokens of a turn whose assistant message arrived (null while it is still generating or failed). */
export function generatedTokens(sample: SampleView, turn: TurnView): number | null {
  if (turn.assistantIndex === null) return null;
  const m = sample.messages[turn.assistantIndex];
  return m ? tokenCount(m) : 0;
}

/** Observation tokens of a turn the environment answered (after the context cut), else null. */
export function observationTokens(sample: SampleView, turn: TurnView): number | null {
  if (turn.observationIndex === null) return null;
  const m = sample.messages[turn.observationIndex];
  return m ? tokenCount(m) : 0;
}

/** A sample's turns that reached a successful environment step (assessed turns, sync turn count). */
const steppedTurns = (s: SampleView) => s.turns.filter((t) => t && t.envEnd !== null && t.observationIndex !== null);

interface SampleNumbers {
  genTokens: number;
  envTokens: number;
  truncated: boolean;
  invalid: number;
  thinking: number;
}

function sampleNumbers(s: SampleView): SampleNumbers {
  let genTokens = 0;
  let envTokens = 0;
  let truncated = false;
  let invalid = 0;
  let thinking = 0;
  for (const t of s.turns) {
    if (!t) continue;
    genTokens += generatedTokens(s, t) ?? 0;
    envTokens += observationTokens(s, t) ?? 0;
    if (t.responseTruncated || t.truncatedContext) truncated = true;
    if (t.envEnd !== null) {
      if (t.violations.some((v) => isInvalidActionType(v.type))) invalid += 1;
      if (t.violations.some((v) => isThinkingType(v.type))) thinking += 1;
    }
  }
  return { genTokens, envTokens, truncated, invalid, thinking };
}

/** Violation counts per type, in the order each path first observes them. */
function violationCounts(samples: readonly SampleView[], mode: "sync" | "async"): { counts: Record<string, number>; assessed: number } {
  const counts: Record<string, number> = {};
  let assessed = 0;
  const visit = (t: TurnView | undefined) => {
    if (!t || t.envEnd === null || t.observationIndex === null) return;
    assessed += 1;
    for (const v of t.violations) counts[v.type] = (counts[v.type] ?? 0) + 1;
  };
  if (mode === "sync") {
    // Lock-step: turn by turn, the active samples in batch order.
    const turns = Math.max(0, ...samples.map((s) => s.turns.length));
    for (let k = 0; k < turns; k++) for (const s of samples) visit(s.turns[k]);
  } else {
    for (const s of samples) for (const t of s.turns) visit(t);
  }
  return { counts, assessed };
}

/** The final metrics of a finished rollout, keeping only values of the shapes a metric can have. */
function finalMetrics(metrics: Record<string, unknown>): Metrics {
  const out: Metrics = {};
  for (const [key, value] of Object.entries(metrics)) {
    if (typeof value === "number" || Array.isArray(value) || (value !== null && typeof value === "object")) {
      out[key] = value as MetricValue;
    } else if (typeof value === "boolean") {
      out[key] = Number(value);
    }
  }
  return out;
}

export function liveMetrics(model: RunModel, options: LiveMetricsOptions): Metrics {
  if (model.summary.metrics) return finalMetrics(model.summary.metrics);
  const mode = model.summary.mode;
  const samples = model.samples;
  if (mode === null || samples.length === 0) return {};
  const maxTurns = model.summary.maxRolloutTurns;
  const per = samples.map(sampleNumbers);
  const rewards = samples.map((s) => s.totalReward);
  const genTokens = per.map((p) => p.genTokens);
  const envTokens = per.map((p) => p.envTokens);
  const totalTokens = per.map((p) => p.genTokens + p.envTokens);

  let turnCounts: number[];
  let terminated: boolean[];
  let maxTurnsReached: boolean[];
  if (mode === "sync") {
    turnCounts = samples.map((s) => steppedTurns(s).length);
    terminated = samples.map(
      (s) => s.termination === "terminated" || s.termination === "truncated_context" || s.termination === "truncated_response",
    );
    maxTurnsReached = samples.map((s) => s.termination === "max_turns");
  } else {
    turnCounts = samples.map((s) => s.turns.filter(Boolean).length);
    terminated = samples.map((s) => steppedTurns(s).at(-1)?.terminated ?? false);
    maxTurnsReached = turnCounts.map((n) => n >= maxTurns);
  }

  // The same metric groups as the rollouts' own (core/rollout/tally.ts), in each path's key order.
  const metrics: Metrics = { ...episodeMetrics(turnCounts, terminated, per.map((p) => p.truncated), maxTurnsReached) };
  const penalty = (): Metrics => {
    const { counts, assessed } = violationCounts(samples, mode);
    return {
      invalid_action_rate: rate(per.map((p) => p.invalid > 0)),
      malformed_thinking_rate: rate(per.map((p) => p.thinking > 0)),
      ...violationRateMetrics(counts, assessed),
    };
  };
  if (mode === "sync" && options.invalidActionEnabled) Object.assign(metrics, penalty());
  Object.assign(metrics, tokenRewardMetrics(totalTokens, genTokens, envTokens, rewards));
  if (mode === "async") {
    if (options.invalidActionEnabled) Object.assign(metrics, penalty());
    // Worker indices never reach the event stream; the in-browser policies report none.
    metrics.per_worker_token_counts = {};
    const gen: number[] = [];
    const input: number[] = [];
    const total: number[] = [];
    for (const s of samples) {
      for (const t of s.turns) {
        const g = t ? generatedTokens(s, t) : null;
        if (t && g !== null) {
          gen.push(g);
          input.push(t.inputTokens);
          total.push(t.inputTokens + g);
        }
      }
    }
    metrics["histogram/gen_tokens_length"] = gen;
    metrics["histogram/input_tokens_length"] = input;
    metrics["histogram/total_tokens_length"] = total;
  }
  const cancelled = samples.filter((s) => s.termination === "cancelled").length;
  if (cancelled) metrics["lab/cancelled_samples"] = cancelled;
  return metrics;
}
