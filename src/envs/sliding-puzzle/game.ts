/**
 * `SlidingPuzzleGameLogic` (upstream-rollouts.md §5.1, `environments/games/sliding_puzzle.py`): generation,
 * render, welcome text and one game step, with the reference's exact texts.
 */

import { pyInt, pySplit, type Rng } from "../../core/index.js";

export type Grid = number[][];

/** The reference's `game_state` dict (`empty_pos` a 0-based `[row, col]` pair). */
export interface PuzzleState {
  size: number;
  grid: Grid;
  solution: Grid;
  empty_pos: [number, number];
  commands: Record<string, string>;
}

export const PUZZLE_COMMANDS: Readonly<Record<string, string>> = {
  up: "Slide tile below empty space up",
  down: "Slide tile above empty space down",
  left: "Slide tile to the right of empty space left",
  right: "Slide tile to the left of empty space right",
  view: "View the current state of the board",
};

export const SOLVED_TEXT = "Congratulations! You've solved the puzzle!";

/** The solved board: 1…n²−1 in reading order, the blank (0) at the bottom right. */
export function solvedGrid(size: number): Grid {
  const grid = Array.from({ length: size }, (_, r) => Array.from({ length: size }, (_, c) => r * size + c + 1));
  grid[size - 1]![size - 1] = 0;
  return grid;
}

// The reference's neighbour order: right, down, left, up (of the blank).
const SHUFFLE_OFFSETS: readonly [number, number][] = [
  [0, 1],
  [1, 0],
  [0, -1],
  [-1, 0],
];

/** `generate(config)`: the solved board shuffled by `shuffleMoves` random blank moves, each one `rng.choice`. */
export function generatePuzzle(size: number, shuffleMoves: number, rng: Rng): PuzzleState {
  const grid = solvedGrid(size);
  const solution = grid.map((row) => [...row]);
  let [r, c] = [size - 1, size - 1];
  for (let i = 0; i < shuffleMoves; i++) {
    const moves: [number, number][] = [];
    for (const [dr, dc] of SHUFFLE_OFFSETS) {
      const [nr, nc] = [r + dr, c + dc];
      if (nr >= 0 && nr < size && nc >= 0 && nc < size) moves.push([nr, nc]);
    }
    if (moves.length === 0) continue; // a 1×1 board: the reference skips the swap too
    const [nr, nc] = rng.choice(moves);
    grid[r]![c] = grid[nr]![nc]!;
    grid[nr]![nc] = 0;
    [r, c] = [nr, nc];
  }
  return { size, grid, solution, empty_pos: [r, c], commands: { ...PUZZLE_COMMANDS } };
}

/** `init(state)`: the welcome text. */
export function puzzleInitText(state: Pick<PuzzleState, "size">): string {
  const n = state.size;
  return (
    "\n===== SLIDING PUZZLE =====\n" +
    `Arrange the ${n}x${n} grid by sliding tiles into the empty space.\n` +
    `- The goal is to arrange numbers from 1 to ${n * n - 1} in order\n` +
    "- Use 'up', 'down', 'left', 'right' to slide in that direction\n" +
    "- Use 'view' to see the current state of the board"
  );
}

/** Python's `f"{s:^{width}}"`: the odd space of padding goes to the right. */
function centre(s: string, width: number): string {
  const pad = Math.max(0, width - s.length);
  const left = Math.floor(pad / 2);
  return " ".repeat(left) + s + " ".repeat(pad - left);
}

/** `render(state)`: "\n", borders, one line per row and the column labels, joined with "\n". */
export function renderPuzzle(state: Pick<PuzzleState, "size" | "grid">): string {
  const { size, grid } = state;
  const w = String(size * size - 1).length;
  const border = `  +${"-".repeat((w + 2) * size)}+`;
  const rows = grid.map((row, i) => {
    const cells = row.map((v) => (v === 0 ? " ".repeat(w + 2) : ` ${String(v).padStart(w)} `)).join("");
    return `${i + 1} |${cells}|`;
  });
  let labels = "    ";
  for (let j = 0; j < size; j++) labels += centre(String(j + 1), w + 2);
  return ["\n", border, ...rows, border, labels].join("\n");
}

export interface GameStepResult {
  response: string;
  reward: number;
  terminated: boolean;
  state: PuzzleState;
}

const DIRECTION_OFFSETS: Readonly<Record<string, [number, number]>> = {
  up: [1, 0], // the tile below the blank moves up
  down: [-1, 0],
  left: [0, 1],
  right: [0, -1],
};

const gridsEqual = (a: Grid, b: Grid) =>
  a.length === b.length && a.every((row, r) => row.length === b[r]!.length && row.every((v, c) => v === b[r]![c]));

/** `step(action, state)`: never mutates `state`; the returned state is a fresh copy (the reference deep-copies). */
export function puzzleStep(action: string, state: PuzzleState): GameStepResult {
  const next: PuzzleState = structuredClone(state);
  const { size, grid } = state;
  const [er, ec] = state.empty_pos;
  const unchanged = (response: string): GameStepResult => ({ response, reward: 0, terminated: false, state: next });

  let target: [number, number];
  let moved: (tile: number) => string;
  if (action.startsWith("slide ")) {
    const parts = pySplit(action);
    const rc = parts.length === 3 ? [pyInt(parts[1]!), pyInt(parts[2]!)] : [null, null];
    if (rc[0] === null || rc[1] === null) return unchanged("Invalid input format. Use: slide row col");
    const [r, c] = [rc[0]! - 1, rc[1]! - 1];
    if (!(r >= 0 && r < size && c >= 0 && c < size)) {
      return unchanged(`Invalid position. Row/column must be between 1 and ${size}.`);
    }
    if (Math.abs(r - er) + Math.abs(c - ec) !== 1) return unchanged("Tile must be adjacent to the empty space.");
    target = [r, c];
    moved = (tile) => `Slid tile ${tile} into the empty space.`;
  } else if (Object.hasOwn(DIRECTION_OFFSETS, action)) {
    const [dr, dc] = DIRECTION_OFFSETS[action]!;
    const [r, c] = [er + dr, ec + dc];
    if (!(r >= 0 && r < size && c >= 0 && c < size)) return unchanged(`Cannot slide ${action}.`);
    target = [r, c];
    moved = (tile) => `Slid tile ${tile} ${action}.`;
  } else {
    return unchanged("Unknown command. Type 'help' to see available commands.");
  }

  const [r, c] = target;
  const tile = grid[r]![c]!;
  next.grid[er]![ec] = tile;
  next.grid[r]![c] = 0;
  next.empty_pos = [r, c];
  if (gridsEqual(next.grid, next.solution)) {
    return { response: SOLVED_TEXT, reward: 1.0, terminated: true, state: next };
  }
  return unchanged(moved(tile));
}
