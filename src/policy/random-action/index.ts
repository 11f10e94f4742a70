/**
 * The random-action policy: a baseline that answers every turn with a **uniformly random well-formed action** of
 * the environment it recognises from the context, so a benchmark can tell "the policy acts well" from "the policy
 * merely writes the format". Like the oracle (src/policy/oracle/), it reads only the decoded context and imports no
 * environment code; each turn draws from a generator seeded by (seed, sample, turn), so sync and async runs of the
 * same scenario make the same choices, and another seed makes other ones.
 *
 * What "uniformly random well-formed action" means, per environment (one solver each, same shape as the oracle's):
 * - sliding puzzle: one of the four directions `up`/`down`/`left`/`right`, uniformly, in the oracle's exact format
 *   (`Let me think.\n<action>X</action>`). A direction that cannot slide is still an action the puzzle reads (it
 *   answers "Cannot slide …" and counts the move); `view` and `slide r c` are left out (no move / another syntax).
 * - calculator: the kind first, uniformly (a call or a final answer), then uniformly within it: a call
 *   `[a, b, op]<call: calculator>` with `a`, `b` from the numbers the context shows (the problem's literals and
 *   every `<result>`, as written) and `op` from sum/diff/prod/div (div left out when `b` is 0: the environment
 *   would answer "Calculation failed"); a final answer is one of those numbers alone, as the oracle's final turn is.
 *   Two levels, because a flat draw over every call would make a final answer vanishingly rare.
 * - workspace (structured Hermes `<tool_call>` JSON): one of the four session tools uniformly, then its arguments
 *   uniformly from what the context shows: run_shell a generic command (`ls`, `ls -R`, `pwd`, `find /workspace
 *   -type f`, `cat|wc -l|head -n 5 <path>`), read_file a path, write_file a path with a line seen in an output (or a
 *   path) as its content, task_complete `{}`. Paths are the absolute `/workspace…` paths in the prompt and the
 *   observations. Every call is schema-valid (strings where the tools want strings, every required key).
 * - number guess (environments/number_guess.js): `<guess>k</guess>` with k uniform in 1..N, N from the prompt.
 */

import { Rng, type TokenizerInterface } from "../../core/index.js";
import type { OracleSolver } from "../oracle/types.js";
import { TextPolicy } from "../text-policy.js";
import { randomCalculatorSolver } from "./calculator.js";
import { randomNumberGuessSolver } from "./number-guess.js";
import { randomPuzzleSolver } from "./sliding-puzzle.js";
import { randomWorkspaceSolver } from "./workspace.js";

/** One solver per environment, in the oracle's shape (`matches`, `respond`; `errorRate` is ignored). */
export function makeRandomActionSolvers(): OracleSolver[] {
  return [randomPuzzleSolver, randomCalculatorSolver, randomWorkspaceSolver, randomNumberGuessSolver];
}

export interface RandomActionOptions {
  seed?: number;
  solvers?: readonly OracleSolver[];
}

export function randomActionPolicy(tokenizer: TokenizerInterface, options: RandomActionOptions = {}): TextPolicy {
  const seed = options.seed ?? 0;
  const solvers = options.solvers ?? makeRandomActionSolvers();
  return new TextPolicy(tokenizer, ({ sampleId, turn, promptText, stopStrings }) => {
    const solver = solvers.find((s) => s.matches(promptText));
    if (!solver) return new Error("the random-action policy does not recognise this task's environment");
    return solver.respond({ promptText, stopStrings, rng: Rng.derive(seed, "random-action", sampleId, turn), errorRate: 0 });
  });
}
