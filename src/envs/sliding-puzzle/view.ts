/** The puzzle's state as the UI draws it: the board as a grid (the blank as null). */

import type { Metadata } from "../../core/index.js";
import type { EnvView } from "../types.js";
import type { PuzzleMetadata } from "./env.js";

export function slidingPuzzleView(metadata: Metadata): EnvView {
  const meta = metadata as Partial<PuzzleMetadata> | null;
  const state = meta?.game_state;
  if (!state || !Array.isArray(state.grid)) {
    // The environment returns no metadata once the episode is over.
    return { kind: "text", title: "Sliding puzzle", text: "No board: the episode has ended." };
  }
  const moves = typeof meta.num_moves === "number" ? meta.num_moves : 0;
  const budget = typeof meta.max_moves === "number" ? ` of ${meta.max_moves}` : "";
  return {
    kind: "grid",
    title: `Sliding puzzle ${state.size}×${state.size}`,
    size: state.size,
    cells: state.grid.map((row) => row.map((v) => (v === 0 ? null : v))),
    caption: `Moves made: ${moves}${budget}`,
  };
}
