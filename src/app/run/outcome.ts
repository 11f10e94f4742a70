/**
 * How samples and runs came out, at a glance: the termination says why a sample ended, the outcome whether that was
 * a success. A sample the environment ended (or an imported run's own reason did) with a positive total reward is
 * `solved`; one it ended with none (a number-guess game out of guesses, a puzzle given up) is `failed`; one a limit
 * cut short (max turns, the context, the response's token limit) is `cut`; `error` and `stopped` (a Stop, a run replaced) say so. And what went wrong
 * inside a turn (a truncated response, malformed thinking, a tool call that does not parse or fit its schema),
 * which the rows show as badges.
 */

import {
  VIOLATION_ENV_INVALID_ACTION,
  VIOLATION_ENV_MALFORMED_THINKING,
  VIOLATION_MALFORMED_THINKING,
  VIOLATION_MALFORMED_TOOL_CALL,
  VIOLATION_SCHEMA_ARGS,
  VIOLATION_SCHEMA_UNKNOWN_TOOL,
  VIOLATION_UNEXECUTED_PATTERN,
} from "../../core/index.js";
import type { RunSummary, SampleView, TurnView } from "./run-model.js";

export type Outcome = "solved" | "failed" | "cut" | "error" | "stopped";

export const OUTCOME_WORDS: Record<Outcome, string> = {
  solved: "solved",
  failed: "failed",
  cut: "cut off",
  error: "error",
  stopped: "stopped",
};

/** What each outcome means, for titles and the legend. */
export const OUTCOME_MEANING: Record<Outcome, string> = {
  solved: "the episode ended (the environment said so, or an imported run's own reason) with a positive total reward",
  failed: "the episode ended (the environment said so, or an imported run's own reason) with no positive reward",
  cut: "a limit ended it first (max turns, the context length, or the response's token limit)",
  error: "the rollout failed for this sample (its error is shown)",
  stopped: "stopped before it ended (Stop, or the run was replaced)",
};

/**
 * The endings that are limits: the lab's three, and those other libraries' dumps write (an OpenAI finish reason
 * `length`, NeMo Gym's `max_output_tokens`, verifiers' stop conditions `max_turns_reached` and `prompt_too_long`).
 */
const LIMITS = new Set(["max_turns", "truncated_context", "truncated_response", "length", "max_output_tokens", "max_turns_reached", "prompt_too_long"]);

/**
 * The outcome of a finished sample; null while it runs. An ending that is neither a limit, an error nor a stop (the
 * environment's `terminated`, an imported run's own reason such as SkyRL's `stop`, or none recorded) is judged by the
 * reward.
 */
export function sampleOutcome(s: Pick<SampleView, "state" | "termination" | "totalReward">): Outcome | null {
  if (s.state !== "done") return null;
  if (s.termination === "error") return "error";
  if (s.termination === "cancelled") return "stopped";
  if (LIMITS.has(s.termination ?? "")) return "cut";
  return s.totalReward > 0 ? "solved" : "failed";
}

export interface RunOutcomes {
  samples: number;
  finished: number;
  counts: Record<Outcome, number>;
  /** Over all samples, finished or not (null without samples). */
  meanReward: number | null;
  /** Turns whose response was cut at its token limit. */
  truncatedResponses: number;
  /** Turns with an invalid-action or malformed-thinking violation. */
  turnsWithViolations: number;
}

export function runOutcomes(samples: readonly SampleView[]): RunOutcomes {
  const counts: Record<Outcome, number> = { solved: 0, failed: 0, cut: 0, error: 0, stopped: 0 };
  let finished = 0;
  let reward = 0;
  let truncatedResponses = 0;
  let turnsWithViolations = 0;
  for (const s of samples) {
    reward += s.totalReward;
    const outcome = sampleOutcome(s);
    if (outcome) {
      finished += 1;
      counts[outcome] += 1;
    }
    for (const t of s.turns) {
      if (!t) continue;
      if (t.responseTruncated) truncatedResponses += 1;
      if (turnViolations(s, t).length) turnsWithViolations += 1;
    }
  }
  return { samples: samples.length, finished, counts, meanReward: samples.length ? reward / samples.length : null, truncatedResponses, turnsWithViolations };
}

/** A run's status in words: `finished`, or `finished with 3 errors` when some of its samples did not end well. */
export function statusDetail(status: RunSummary["status"] | "idle" | "paused", outcomes: RunOutcomes): string | null {
  if (status !== "finished") return null;
  const { error, stopped } = outcomes.counts;
  const parts = [error ? `${error} ${error === 1 ? "error" : "errors"}` : "", stopped ? `${stopped} stopped` : ""].filter(Boolean);
  return parts.length ? `with ${parts.join(" and ")}` : null;
}

/**
 * The next sample after `from` (before it, with `back`) that failed, errored or was cut off, round the batch; null if
 * none. With `shown` (the rows a filter shows), only those count.
 */
export function nextFailure(outcomes: readonly (Outcome | null)[], from: number, back = false, shown: readonly number[] | null = null): number | null {
  const n = outcomes.length;
  const visible = shown ? new Set(shown) : null;
  for (let step = 1; step <= n; step++) {
    const i = (((from + (back ? -step : step)) % n) + n) % n;
    if (visible && !visible.has(i)) continue;
    const o = outcomes[i];
    if (o === "failed" || o === "error" || o === "cut") return i;
  }
  return null;
}

/** What went wrong inside a turn, in words (empty when nothing did). */
export function turnProblems(s: SampleView, t: TurnView): string[] {
  const problems: string[] = [];
  if (t.responseTruncated) problems.push("response truncated at its token limit");
  for (const v of turnViolations(s, t)) problems.push(VIOLATION_WORDS[v.type] ?? v.type.replace(/_/g, " "));
  return [...new Set(problems)];
}

/** A turn's violations: the env step's, or the assistant message's stamp (an imported run's). */
function turnViolations(s: SampleView, t: TurnView) {
  if (t.violations.length) return t.violations;
  const assistant = t.assistantIndex === null ? undefined : s.messages[t.assistantIndex];
  return assistant?.invalid_action_violations ?? [];
}

const VIOLATION_WORDS: Record<string, string> = {
  [VIOLATION_UNEXECUTED_PATTERN]: "an action in a form the environment does not execute",
  [VIOLATION_MALFORMED_TOOL_CALL]: "a tool call that does not parse",
  [VIOLATION_SCHEMA_UNKNOWN_TOOL]: "a call of an unknown tool",
  [VIOLATION_SCHEMA_ARGS]: "a tool call whose arguments do not fit its schema",
  [VIOLATION_MALFORMED_THINKING]: "malformed thinking",
  [VIOLATION_ENV_MALFORMED_THINKING]: "malformed thinking (said by the environment)",
  [VIOLATION_ENV_INVALID_ACTION]: "an invalid action (said by the environment)",
};
