/** The sliding puzzle's random action: one of the four directions, in the oracle's format. */

import type { OracleSolver } from "../oracle/types.js";

export const PUZZLE_DIRECTIONS = ["up", "down", "left", "right"] as const;

export const randomPuzzleSolver: OracleSolver = {
  env: "sliding_puzzle",
  // The oracle's test: the puzzle's banner and its board.
  matches: (text) => text.includes("===== SLIDING PUZZLE =====") && text.includes("Current Board State:"),
  respond: ({ rng }) => `Let me think.\n<action>${rng.choice(PUZZLE_DIRECTIONS)}</action>`,
};
