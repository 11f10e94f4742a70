/**
 * The calculator's random action: a call or a final answer (uniformly), over the numbers the context shows: the
 * literals of the problem's `Solve:` line and every `<result>` so far, written as they appear (Python's `float()`
 * reads them all).
 */

import { pyFloat } from "../../core/index.js";
import type { OracleSolver } from "../oracle/types.js";

const OPS = ["sum", "diff", "prod", "div"] as const;
const PROBLEM_RE = /(?:^|\n)Solve: ([^\n]*?)(?:<\|im_end\|>|\n|$)/;
const RESULT_RE = /<result>([^<]*)<\/result>/g;

/** The numbers a call may use: the problem's literals, then the results, in order of appearance. */
export function calculatorNumbers(text: string): string[] {
  const problem = PROBLEM_RE.exec(text);
  if (!problem) return [];
  const literals = problem[1]!.match(/\d+(?:\.\d+)?/g) ?? [];
  const after = text.slice(problem.index + problem[0].length);
  const results = [...after.matchAll(RESULT_RE)].map((m) => m[1]!.trim()).filter((r) => pyFloat(r) !== null);
  return [...literals, ...results];
}

export const randomCalculatorSolver: OracleSolver = {
  env: "calculator",
  matches: (text) => PROBLEM_RE.test(text),
  respond: ({ promptText, rng }) => {
    const numbers = calculatorNumbers(promptText);
    if (numbers.length === 0) throw new Error("random-action calculator: the prompt has no 'Solve:' line with numbers in it");
    if (rng.next() < 0.5) return rng.choice(numbers);
    const a = rng.choice(numbers);
    const b = rng.choice(numbers);
    // A division by zero is no result: the environment answers "Calculation failed" and ends the episode.
    const ops = Math.abs(pyFloat(b)!) < 1e-6 ? OPS.filter((o) => o !== "div") : OPS;
    return `[${a}, ${b}, ${rng.choice(ops)}]<call: calculator>`;
  },
};
