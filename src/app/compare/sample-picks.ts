/**
 * Finding samples to compare, without React: the searchable picker's filter (an index, a task name, an outcome
 * word) and the "compare with…" shortcuts (the next failure after a sample, a success of the same prompt).
 */

import { nextFailure, OUTCOME_MEANING, OUTCOME_WORDS, sampleOutcome, type Outcome } from "../run/outcome.js";
import type { SampleView } from "../run/run-model.js";
import { TERMINATION_WORDS } from "../termination.js";

/** What the picker and the shortcuts read of a sample. */
export type PickSample = Pick<SampleView, "sample" | "idx" | "task" | "state" | "termination" | "totalReward" | "error" | "messages" | "promptMessages">;

/** The most options the picker renders at once: a 1,000-sample run stays a short list (typing narrows it). */
export const MAX_OPTIONS = 50;

export const fmtReward = (x: number | null) => (x === null ? "none" : x > 0 ? `+${Number(x.toPrecision(6))}` : String(Number(x.toPrecision(6))));

/** A sample's outcome in words; a sample still under way is `running`. */
export function outcomeWord(outcome: Outcome | null): string {
  return outcome ? OUTCOME_WORDS[outcome] : "running";
}

/** The words an outcome answers to in a search (`cut off`: `cut` and `off`). */
function outcomeTerms(outcome: Outcome | null): string[] {
  return outcomeWord(outcome).split(" ");
}

/** The picker's one-line text of a sample. */
export function optionText(s: PickSample): string {
  return `sample ${s.sample} · ${s.task} · ${outcomeWord(sampleOutcome(s))} · reward ${fmtReward(s.totalReward)}`;
}

/** Everything about a sample the option may have cut short (long task names, errors), for its title. */
export function optionTitle(s: PickSample): string {
  const outcome = sampleOutcome(s);
  const ending = s.termination !== null ? (TERMINATION_WORDS[s.termination] ?? s.termination) : s.state === "done" ? "no termination" : "still running";
  const lines = [
    `sample ${s.sample} (idx ${s.idx}) · task ${s.task}`,
    `${outcomeWord(outcome)}${outcome ? `: ${OUTCOME_MEANING[outcome]}` : ""} · ${ending} · total reward ${fmtReward(s.totalReward)}`,
  ];
  if (s.error !== null) lines.push(`error: ${s.error}`);
  return lines.join("\n");
}

/**
 * Whether a sample matches a query: every word of it must match, each as a sample index (its digits begin the
 * index: `1` finds 1, 10–19, …, so an index can be typed digit by digit), a part of the task name, or the beginning
 * of an outcome word (`fail`, `cut`, `solved`). Case does not matter.
 */
export function matchesQuery(s: PickSample, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const task = s.task.toLowerCase();
  const terms = outcomeTerms(sampleOutcome(s));
  const index = String(s.sample);
  return words.every((w) => (/^\d+$/.test(w) && index.startsWith(w)) || task.includes(w) || terms.some((t) => t.startsWith(w)));
}

export interface Matches<S> {
  /** The matching samples to render (at most `limit`), in index order but for an exact index typed, which comes first. */
  shown: S[];
  /** How many match in all. */
  total: number;
}

/** The samples matching `query`, at most `limit` of them (the rest are counted, not collected). */
export function filterSamples<S extends PickSample>(samples: readonly S[], query: string, limit = MAX_OPTIONS): Matches<S> {
  const trimmed = query.trim();
  const exact = /^\d+$/.test(trimmed) ? samples[Number(trimmed)] : undefined;
  const shown: S[] = exact ? [exact] : [];
  let total = exact ? 1 : 0;
  for (const s of samples) {
    if (s === exact || !matchesQuery(s, trimmed)) continue;
    total += 1;
    if (shown.length < limit) shown.push(s);
  }
  return { shown, total };
}

/**
 * The next sample after `from`, round the batch, that failed, errored or was cut off (not solved, not stopped, not
 * running); null when no other sample did.
 */
export function nextFailureAfter(samples: readonly PickSample[], from: number): number | null {
  const next = nextFailure(samples.map(sampleOutcome), from);
  return next === from ? null : next;
}

/**
 * Whether two samples were given the same prompt: the same task and the same prompt messages (role and content of
 * each message before the first turn). The environment's initial info is not compared: the prompt is what the
 * policy saw, and what the comparison's "prompt" row compares; a repeat of a prompt (GRPO-style groups, a saved
 * copy of the run) has the same one, a different problem has a different one.
 */
export function samePrompt(a: PickSample, b: PickSample): boolean {
  if (a.task !== b.task || a.promptMessages !== b.promptMessages) return false;
  for (let i = 0; i < a.promptMessages; i++) {
    const [ma, mb] = [a.messages[i], b.messages[i]];
    if (!ma || !mb || ma.role !== mb.role || ma.content !== mb.content) return false;
  }
  return true;
}

/**
 * A solved sample other than `of` with its prompt: the first after it, round the batch; null when there is none.
 * Samples are named by their position in the run (which is their `sample` number).
 */
export function samePromptSuccess(samples: readonly PickSample[], of: number): number | null {
  const a = samples[of];
  if (!a) return null;
  const n = samples.length;
  for (let step = 1; step < n; step++) {
    const s = samples[(of + step) % n]!;
    // The outcome first: it is cheap, the prompt's texts may be long.
    if (sampleOutcome(s) === "solved" && samePrompt(a, s)) return (of + step) % n;
  }
  return null;
}
