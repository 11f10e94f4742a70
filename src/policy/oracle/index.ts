/**
 * The oracle policy: per environment, a solver that reads the context and answers with the next step of a plan
 * that solves the task (so a demo shows real successes). With `errorRate` > 0 it makes seeded mistakes.
 * Each turn's decisions are drawn from a generator seeded by (seed, sample, turn), so sync and async runs of the
 * same scenario make the same choices.
 */

import { Rng, type TokenizerInterface } from "../../core/index.js";
import { TextPolicy } from "../text-policy.js";
import { calculatorOracle } from "./calculator.js";
import { slidingPuzzleOracle } from "./sliding-puzzle.js";
import type { OracleSolver } from "./types.js";
import { workspaceOracle } from "./workspace.js";

export const ORACLE_SOLVERS: readonly OracleSolver[] = [slidingPuzzleOracle, calculatorOracle, workspaceOracle];

export interface OracleOptions {
  seed?: number;
  errorRate?: number;
  solvers?: readonly OracleSolver[];
}

export function oraclePolicy(tokenizer: TokenizerInterface, options: OracleOptions = {}): TextPolicy {
  const seed = options.seed ?? 0;
  const errorRate = options.errorRate ?? 0;
  const solvers = options.solvers ?? ORACLE_SOLVERS;
  return new TextPolicy(tokenizer, ({ sampleId, turn, promptText, stopStrings }) => {
    const solver = solvers.find((s) => s.matches(promptText));
    if (!solver) return new Error("the oracle does not recognise this task's environment");
    return solver.respond({ promptText, stopStrings, rng: Rng.derive(seed, sampleId, turn), errorRate });
  });
}

export type { OracleSolver } from "./types.js";
