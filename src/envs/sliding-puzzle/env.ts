/**
 * `SlidingPuzzleEnv` / `SlidingPuzzleRunner.process_turn` (upstream-rollouts.md §5.1), one sample at a time, with
 * the reference's branch order: move budget spent, unparsable action, `view`, then a game step.
 */

import {
  findCodePoints,
  lowerCodePoints,
  pyStrip,
  rfindCodePoints,
  type EnvironmentInterface,
  type EnvironmentReturn,
  type EnvMessage,
  type Metadata,
} from "../../core/index.js";
import { batchTotalRewards, environmentMessage, lastAssistantText, stepEachSample, type SampleTurn } from "../step.js";
import { puzzleStep, renderPuzzle, type PuzzleState } from "./game.js";

export const PUZZLE_STOP_STRINGS: readonly string[] = ["</action>"];

export interface PuzzleMetadata {
  game_state: PuzzleState;
  num_moves: number;
  max_moves: number;
  [extra: string]: unknown;
}

export type PuzzleTurn = SampleTurn<PuzzleMetadata>;

const OPEN = Array.from("<action>");
const CLOSE = Array.from("</action>");

/**
 * `_parse_action`: the text between the last `<action>` (case-insensitive) and the first `</action>` after it,
 * stripped; null without such a pair. Indices are found in the lower-cased text and applied to the original one,
 * by code point, as Python does.
 */
export function parsePuzzleAction(text: string): string | null {
  const lower = lowerCodePoints(text);
  const start = rfindCodePoints(lower, OPEN);
  if (start < 0) return null;
  const end = findCodePoints(lower, CLOSE, start + OPEN.length);
  if (end < 0) return null;
  return pyStrip(Array.from(text).slice(start + OPEN.length, end).join(""));
}

function asPuzzleMetadata(metadata: Metadata): PuzzleMetadata {
  const m = metadata as Partial<PuzzleMetadata> | null;
  if (!m || typeof m !== "object" || !m.game_state || typeof m.num_moves !== "number" || typeof m.max_moves !== "number") {
    throw new Error("sliding_puzzle: metadata must hold game_state, num_moves and max_moves");
  }
  return m as PuzzleMetadata;
}

export function processPuzzleTurn(log: readonly EnvMessage[], metadata: Metadata): PuzzleTurn {
  const meta = asPuzzleMetadata(metadata);
  const stops = () => [...PUZZLE_STOP_STRINGS];

  // 1. The budget is checked before the action is read: the turn after the last allowed move is wasted.
  if (meta.num_moves >= meta.max_moves) {
    return {
      observation: environmentMessage(`<error>Maximum moves (${meta.max_moves}) reached.</error>`),
      reward: 0,
      terminated: true,
      nextStopStrings: null,
      nextMetadata: null,
    };
  }

  const action = parsePuzzleAction(lastAssistantText(log));
  // 2. No action: metadata None keeps the old state, and the move is not counted.
  if (action === null) {
    const board = renderPuzzle(meta.game_state);
    return {
      observation: environmentMessage(
        `<environment>\n${board}\n\nInvalid response format no move made. Try <action></action> like this: <action>your_action</action></environment>\n`,
      ),
      reward: 0,
      terminated: false,
      nextStopStrings: stops(),
      nextMetadata: null,
    };
  }
  // 3. View: an unchanged copy of the metadata.
  if (action === "view") {
    const board = renderPuzzle(meta.game_state);
    return {
      observation: environmentMessage(`<environment>\n${board}\n\nViewing the board. No move made.</environment>\n`),
      reward: 0,
      terminated: false,
      nextStopStrings: stops(),
      nextMetadata: structuredClone(meta),
    };
  }
  // 4. A game step: counted as a move whether or not it was valid.
  const step = puzzleStep(action, meta.game_state);
  const next: PuzzleMetadata = { ...structuredClone(meta), game_state: step.state, num_moves: meta.num_moves + 1 };
  return {
    observation: environmentMessage(`<environment>\n${step.response}\n</environment>\n`),
    reward: step.reward,
    terminated: step.terminated,
    nextStopStrings: stops(),
    nextMetadata: step.terminated ? null : next,
  };
}

/** `global_post_process_and_metrics`: the share of samples whose total reward is exactly 1.0. */
export function slidingPuzzleSuccessRate(totalRewards: readonly number[]): number {
  if (totalRewards.length === 0) return 0.0;
  return totalRewards.filter((r) => r === 1.0).length / totalRewards.length;
}

export class SlidingPuzzleEnv implements EnvironmentInterface {
  step(messageLogBatch: EnvMessage[][], metadata: Metadata[]): EnvironmentReturn {
    return stepEachSample(messageLogBatch, metadata, processPuzzleTurn);
  }

  globalPostProcessAndMetrics(batch: Record<string, unknown[]>): [Record<string, unknown[]>, Record<string, number>] {
    return [batch, { sliding_puzzle_success_rate: slidingPuzzleSuccessRate(batchTotalRewards(batch)) }];
  }
}
