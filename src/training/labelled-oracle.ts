/**
 * The oracle policy (src/policy/oracle/) that also says which of its turns were mistakes. Each turn it asks the
 * solver twice with the same seeded generator (seed, sample, turn): at the run's error rate, and at 0, which is the
 * step it planned (every solver draws "erring?" first, so the rest of the plan is the same draw). A turn whose text,
 * cut at the stop strings as the engine cuts it, differs from the planned one was a mistake.
 */

import { Rng, type TokenizerInterface } from "../core/index.js";
import { ORACLE_SOLVERS, type OracleSolver } from "../policy/oracle/index.js";
import { currentPuzzleBoard } from "../policy/oracle/sliding-puzzle.js";
import { cutAtStopStrings, TextPolicy } from "../policy/text-policy.js";

export interface LabelledOracleOptions {
  seed: number;
  errorRate: number;
  solvers?: readonly OracleSolver[];
  /** What the planned turns think aloud before acting (the oracle itself never does); mistakes stay as written. */
  thoughts?: Thoughts;
  /** With `tool_step`: a planned call right after a look-up that found no such file first says so (`notFoundLine`). */
  notFoundThoughts?: boolean;
}

/**
 * - `tool_step`: a planned tool call opens with a think block naming the step (`<think>\nNext: read_file.\n</think>\n\n`).
 * - `puzzle_board`: a planned puzzle move opens with a think block that writes out the board as it now stands and
 *   where the empty space is. The environment shows the board only once, in the prompt, so a small model that must
 *   pick a move from it gets the state next to the decision, and learns to carry it from turn to turn.
 */
export type Thoughts = "tool_step" | "puzzle_board";

const TOOL_NAME = /"name":\s*"([^"]+)"/;

/**
 * `The read_file call found no such file.` when the context's last call (the text after its last `</tool_call>`)
 * was answered "No such file or directory", else null. Said before the next step is named, it puts the failure
 * (the observation's last words) and the failed call's tool next to the decision to look up again, which the
 * committed weights often make as if the look-up had worked. Measured in session 31 and worse (docs/training.md,
 * section 7): off in the recipe.
 */
export function notFoundLine(context: string): string | null {
  const end = context.lastIndexOf("</tool_call>");
  if (end < 0 || !context.includes("No such file or directory", end)) return null;
  const tool = TOOL_NAME.exec(context.slice(context.lastIndexOf("<tool_call>", end)))?.[1];
  return tool ? `The ${tool} call found no such file.` : null;
}

/** The think block a planned `<tool_call>` turn opens with: the step's tool, by name, after `before` if given. */
export function thinkBeforeCall(text: string, before: string | null = null): string {
  if (!text.startsWith("<tool_call>")) return text;
  const name = TOOL_NAME.exec(text)?.[1] ?? "a tool";
  return `<think>\n${before ? `${before}\n` : ""}Next: ${name}.\n</think>\n\n${text}`;
}

/**
 * The board, row by row (`Board: 1 2 3 / 4 _ 6 / 7 5 8.`), and the empty cell, as a puzzle move's think block in
 * place of the oracle's `Let me think.`; the move itself is unchanged. Without a board in the context, unchanged.
 */
export function thinkAboutBoard(text: string, context: string): string {
  const board = currentPuzzleBoard(context);
  const action = /<action>[\s\S]*$/.exec(text)?.[0];
  if (!board || action === undefined) return text;
  const { n, tiles } = board;
  const rows = Array.from({ length: n }, (_, r) => tiles.slice(r * n, (r + 1) * n).map((t) => (t === 0 ? "_" : String(t))).join(" "));
  const blank = tiles.indexOf(0);
  return `<think>\nBoard: ${rows.join(" / ")}.\nEmpty: row ${Math.floor(blank / n) + 1}, column ${(blank % n) + 1}.\n</think>\n${action}`;
}

function think(thoughts: Thoughts | undefined, text: string, context: string, notFoundThoughts: boolean): string {
  if (thoughts === "tool_step") return thinkBeforeCall(text, notFoundThoughts ? notFoundLine(context) : null);
  if (thoughts === "puzzle_board") return thinkAboutBoard(text, context);
  return text;
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
    return think(options.thoughts, actual, promptText, options.notFoundThoughts ?? false);
  });
  return { policy, mistakes };
}
