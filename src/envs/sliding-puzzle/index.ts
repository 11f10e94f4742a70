/** The sliding puzzle environment (upstream-rollouts.md §5.1) as the lab plugs it in. */

import { checkConfigKeys } from "../config.js";
import type { BuiltinEnvironmentDefinition } from "../types.js";
import { slidingPuzzleDataset } from "./dataset.js";
import { SlidingPuzzleEnv } from "./env.js";
import { slidingPuzzleView } from "./view.js";

export { SlidingPuzzleEnv, parsePuzzleAction, processPuzzleTurn, slidingPuzzleSuccessRate } from "./env.js";
export type { PuzzleMetadata, PuzzleTurn } from "./env.js";
export { generatePuzzle, puzzleInitText, puzzleStep, renderPuzzle, solvedGrid, PUZZLE_COMMANDS } from "./game.js";
export type { Grid, PuzzleState } from "./game.js";
export { generateSlidingPuzzleDataset, puzzleDatasetConfig, puzzleDatum, puzzleUserText, rawPuzzleDatum, slidingPuzzleDataset } from "./dataset.js";
export { slidingPuzzleView } from "./view.js";

export const slidingPuzzleEnvironment: BuiltinEnvironmentDefinition = {
  name: "sliding_puzzle",
  defaultTaskName: "sliding_puzzle_game",
  title: "Sliding puzzle",
  description:
    "NeMo RL's sliding-tile game: the model answers <action>up|down|left|right|view|slide r c</action>; " +
    "reward 1.0 on the move that solves the board, within max_moves.",
  create(config) {
    // The reference's env reads cfg["game_config"] but never uses it; the lab's takes no settings.
    checkConfigKeys("sliding_puzzle config", config, []);
    return new SlidingPuzzleEnv();
  },
  generateDataset: slidingPuzzleDataset as BuiltinEnvironmentDefinition["generateDataset"],
  view: slidingPuzzleView,
};
