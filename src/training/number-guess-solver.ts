/**
 * A solver for the starter number-guess module (`environments/number_guess.js`), which has no oracle of its own:
 * it bisects the range the prompt states, narrowed by every `higher`/`lower` the context holds. Fixed scripted
 * responses could not react to those answers, so after a mistake they would not show a recovery; this does.
 *
 * Mistakes (with probability `errorRate`, one kind drawn uniformly): no `<guess>` tags (no guess is counted), or a
 * guess outside the range still possible (it uses up a guess).
 */

import type { OracleContext, OracleSolver } from "../policy/oracle/types.js";

const PROMPT_RE = /I am thinking of a number from 1 to (\d+)\. Guess it/;
const EVENT_RE = /<guess>\s*(-?\d+)\s*<\/guess>|<environment>(higher|lower)/g;
const MISTAKES = ["invalid_format", "outside_range"] as const;

/** The range [lo, hi] the secret can still be in, after the context's guesses and answers. */
export function possibleRange(text: string): { lo: number; hi: number } | null {
  const prompt = PROMPT_RE.exec(text);
  if (!prompt) return null;
  let lo = 1;
  let hi = Number(prompt[1]);
  let last: number | null = null;
  for (const m of text.slice(prompt.index).matchAll(EVENT_RE)) {
    if (m[1] !== undefined) last = Number(m[1]);
    else if (last !== null && m[2] === "higher") lo = Math.max(lo, last + 1);
    else if (last !== null && m[2] === "lower") hi = Math.min(hi, last - 1);
  }
  return { lo, hi: Math.max(lo, hi) };
}

function respondToNumberGuess(context: OracleContext): string {
  const range = possibleRange(context.promptText);
  // Drawn every turn, as the built-in oracles do, so a turn's choices do not depend on earlier mistakes.
  const erring = context.rng.next() < context.errorRate;
  if (!range) throw new Error("number-guess solver: the prompt does not say the range ('I am thinking of a number from 1 to N')");
  const guess = Math.floor((range.lo + range.hi) / 2);
  if (!erring) return `<guess>${guess}</guess>`;
  if (context.rng.choice(MISTAKES) === "invalid_format") return `I guess ${guess}.`;
  // Just outside the possible range: below it when there is room, else above.
  return `<guess>${range.lo > 1 ? range.lo - 1 : range.hi + 1}</guess>`;
}

export const numberGuessSolver: OracleSolver = {
  env: "number_guess",
  matches: (text) => PROMPT_RE.test(text),
  respond: respondToNumberGuess,
};
