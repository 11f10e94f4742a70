/**
 * The seeded puzzle dataset (`generate_puzzle_datum` of the reference's example, literals.md): one chat-templated
 * user prompt per datum, the game state in `extra_env_info`.
 *
 * Draw order, from one generator seeded with the request's seed, datum after datum (the reference draws from
 * Python's global `random` in the same order):
 *   1. shuffle count = randint(1, shuffle_moves), plus one when even (an odd count never leaves the board solved);
 *   2. board side = randint(2, size);
 *   3. one `choice` per shuffle move, among the blank's in-bounds neighbours.
 */

import { chatPrompt, Rng } from "../../core/index.js";
import { integerConfig } from "../config.js";
import type { DatasetDatum, DatasetRequest, GeneratedDatum, RawPromptDatum } from "../types.js";
import { PUZZLE_STOP_STRINGS, type PuzzleMetadata } from "./env.js";
import { generatePuzzle, puzzleInitText, renderPuzzle, type PuzzleState } from "./game.js";

export const PUZZLE_SYSTEM_PROMPT = "You are a helpful assistant.";

export interface PuzzleDatasetConfig {
  size: number;
  shuffle_moves: number;
  max_moves: number;
}

const DEFAULTS: PuzzleDatasetConfig = { size: 4, shuffle_moves: 100, max_moves: 30 };
const MINIMUMS: PuzzleDatasetConfig = { size: 2, shuffle_moves: 1, max_moves: 0 };

export function puzzleDatasetConfig(config: Record<string, unknown>): PuzzleDatasetConfig {
  return integerConfig("sliding_puzzle dataset.config", config, DEFAULTS, MINIMUMS);
}

/** The user text of the prompt, exactly as literals.md gives it. */
export function puzzleUserText(state: PuzzleState): string {
  const n = state.size;
  return (
    `${puzzleInitText(state)}\n\n` +
    `Current Board State:\n${renderPuzzle(state)}\n\n` +
    `Reach the goal state where numbers are ordered 1 through ${n * n - 1} ` +
    "with the empty space (0) at the bottom right.\n" +
    "Valid actions: 'up', 'down', 'left', 'right', or 'slide row col' (e.g., 'slide 1 2').\n" +
    "After thinking, output your chosen action on a new line starting with '<action></action>' like this:\n<action>your_action</action>" +
    "\nIf you just want to see the board, output <action>view</action>" +
    "\nThink carefully step-by-step before acting.\n"
  );
}

/** One datum for a given board: the prompt is chat-templated with the system text, then stripped. */
export function puzzleDatum(state: PuzzleState, maxMoves: number, taskName: string): DatasetDatum {
  const metadata: PuzzleMetadata = { game_state: state, num_moves: 0, max_moves: maxMoves };
  return {
    message_log: [{ role: "user", content: chatPrompt(puzzleUserText(state), PUZZLE_SYSTEM_PROMPT, true) }],
    extra_env_info: metadata,
    stop_strings: [...PUZZLE_STOP_STRINGS],
    task_name: taskName,
  };
}

/** The datum with its prompt as raw chat messages (`DatasetRequest.prompts: "messages"`): system and user, unstripped. */
export function rawPuzzleDatum(datum: DatasetDatum): RawPromptDatum {
  const { message_log: _rendered, ...rest } = datum;
  const state = (datum.extra_env_info as unknown as PuzzleMetadata).game_state;
  return {
    ...rest,
    messages: [
      { role: "system", content: PUZZLE_SYSTEM_PROMPT },
      { role: "user", content: puzzleUserText(state) },
    ],
  };
}

/** The dataset; asked for raw prompts, each datum's prompt as chat messages for the active template. */
export function slidingPuzzleDataset(request: DatasetRequest): GeneratedDatum[] {
  const data = generateSlidingPuzzleDataset(request);
  return request.prompts === "messages" ? data.map(rawPuzzleDatum) : data;
}

export function generateSlidingPuzzleDataset(request: DatasetRequest): DatasetDatum[] {
  const cfg = puzzleDatasetConfig(request.config);
  const rng = new Rng(request.seed);
  const data: DatasetDatum[] = [];
  for (let i = 0; i < request.size; i++) {
    let shuffle = rng.int(1, cfg.shuffle_moves);
    if (shuffle % 2 === 0) shuffle += 1;
    const side = rng.int(2, cfg.size);
    data.push(puzzleDatum(generatePuzzle(side, shuffle, rng), cfg.max_moves, request.taskName));
  }
  return data;
}
