/**
 * The oracle policy (src/policy/oracle/) that also says which of its turns were mistakes. Each turn it asks the
 * solver twice with the same seeded generator (seed, sample, turn): at the run's error rate, and at 0, which is the
 * step it planned (every solver draws "erring?" first, so the rest of the plan is the same draw). A turn whose text,
 * cut at the stop strings as the engine cuts it, differs from the planned one was a mistake.
 */

import { Rng, type TokenizerInterface } from "../core/index.js";
import { ORACLE_SOLVERS, type OracleSolver } from "../policy/oracle/index.js";
import { cutAtStopStrings, TextPolicy } from "../policy/text-policy.js";

export interface LabelledOracleOptions {
  seed: number;
  errorRate: number;
  solvers?: readonly OracleSolver[];
  /**
   * Open each planned tool call with a short think block naming the step (`<think>\nNext: read_file.\n</think>\n\n`),
   * as a thinking model writes it; the oracle itself never thinks aloud. Mistakes are left as the oracle wrote them.
   */
  thinkBeforeCalls?: boolean;
}

/** The think block a planned `<tool_call>` turn opens with, when asked for: the step's tool, by name. */
export function thinkBeforeCall(text: string): string {
  if (!text.startsWith("<tool_call>")) return text;
  const name = /"name":\s*"([^"]+)"/.exec(text)?.[1] ?? "a tool";
  return `<think>\nNext: ${name}.\n</think>\n\n${text}`;
}

export interface LabelledOracle {
  policy: TextPolicy;
  /** The turns (0-based, per batch position) whose text was a mistake rather than the planned step. */
  mistakes: Map<number, Set<number>>;
}

export function labelledOraclePolicy(tokenizer: TokenizerInterface, options: LabelledOracleOptions): LabelledOracle {
  const solvers = options.solvers ?? ORACLE_SOLVERS;
  const mistakes = new Map<number, Set<number>>();
  const policy = new TextPolicy(tokenizer, ({ sampleId, turn, promptText, stopStrings }) => {
    const solver = solvers.find((s) => s.matches(promptText));
    if (!solver) return new Error("the oracle does not recognise this task's environment");
    const ask = (errorRate: number) => solver.respond({ promptText, stopStrings, rng: Rng.derive(options.seed, sampleId, turn), errorRate });
    const actual = ask(options.errorRate);
    const cut = (text: string) => cutAtStopStrings(text, stopStrings) ?? text;
    if (cut(actual) !== cut(ask(0))) {
      if (!mistakes.has(sampleId)) mistakes.set(sampleId, new Set());
      mistakes.get(sampleId)!.add(turn);
      return actual;
    }
    return options.thinkBeforeCalls ? thinkBeforeCall(actual) : actual;
  });
  return { policy, mistakes };
}
