/**
 * An oracle solves its environment's task from the text it is given, as a model would: it reads the prompt and
 * the observations so far (the decoded context), works out the state, and answers with the next step of its plan.
 * It imports no environment code: what it knows of the rules it knows as a policy does.
 */

import type { Rng } from "../../core/index.js";

export interface OracleContext {
  /** The whole context so far (prompt, earlier responses and observations), decoded with nothing skipped. */
  promptText: string;
  stopStrings: string[] | null;
  /** Seeded per (oracle seed, sample, turn): decisions do not depend on scheduling order. */
  rng: Rng;
  /** Probability of making one mistake this turn instead of the planned step. */
  errorRate: number;
}

export interface OracleSolver {
  /** Which environment it solves (the environment definition's `name`). */
  env: string;
  /** Whether this context belongs to its environment. */
  matches(promptText: string): boolean;
  /** The response text for this turn (the policy then cuts it at stop strings like an engine would). */
  respond(context: OracleContext): string;
}
