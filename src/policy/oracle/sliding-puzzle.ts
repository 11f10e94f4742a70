/**
 * The sliding puzzle oracle. From the context text alone it rebuilds the board: the one rendered in the prompt,
 * then each observation in order (a rendered board, from `view` or a format error, replaces it; `Slid tile N …`
 * slides tile N into the blank, which is all a successful move can do; the solved message means solved). It then
 * searches a shortest solution and plays its first move as a direction (the TILE moves: `up` slides the tile
 * below the blank up). The prompt does not say the move budget, so the oracle always aims for the fewest moves.
 *
 * Mistakes (with probability `errorRate`, one kind drawn uniformly): an invalid format (no action tags: no move
 * is counted), malformed thinking (an unclosed `<think>` before the planned action, which still counts), or a
 * wrong move (half the time another legal direction, else a slide outside the board; both use up a move).
 */

import type { OracleContext, OracleSolver } from "./types.js";
import { blankNeighbours, solvePuzzle } from "./puzzle-search.js";

interface Board {
  n: number;
  tiles: number[];
}

const BOARD_RE = /  \+(-+)\+\n((?:\d+ \|[^\n]*\|\n)+)  \+-+\+/g;
const OBSERVATION_RE = /<environment>\n([\s\S]*?)<\/environment>/g;
const SOLVED_TEXT = "Congratulations! You've solved the puzzle!";

/** The first rendered board in `text` at or after `from`, with where its render ends. */
function findBoard(text: string, from = 0): (Board & { end: number }) | null {
  BOARD_RE.lastIndex = from;
  for (let m = BOARD_RE.exec(text); m; m = BOARD_RE.exec(text)) {
    const lines = m[2]!.split("\n").filter((l) => l !== "");
    const n = lines.length;
    const tiles: number[] = [];
    for (const line of lines) {
      const cells = line.slice(line.indexOf("|") + 1, line.lastIndexOf("|"));
      const width = cells.length / n;
      if (!Number.isInteger(width) || width < 3) break;
      for (let k = 0; k < n; k++) {
        const cell = cells.slice(k * width, (k + 1) * width).trim();
        tiles.push(cell === "" ? 0 : Number(cell));
      }
    }
    const isPermutation = tiles.length === n * n && [...tiles].sort((a, b) => a - b).every((v, i) => v === i);
    if (isPermutation) return { n, tiles, end: m.index + m[0].length };
  }
  return null;
}

const solved = (n: number) => Array.from({ length: n * n }, (_, i) => (i === n * n - 1 ? 0 : i + 1));

/** The board as it stands after every observation in the context. */
export function currentPuzzleBoard(text: string): Board | null {
  const promptBoard = findBoard(text, Math.max(0, text.indexOf("Current Board State:")));
  if (!promptBoard) return null;
  let { n, tiles } = promptBoard;
  for (const m of text.slice(promptBoard.end).matchAll(OBSERVATION_RE)) {
    const body = m[1]!;
    const shown = findBoard(body);
    const slid = /Slid tile (\d+) /.exec(body);
    if (shown) ({ n, tiles } = shown);
    else if (slid) {
      const [at, blank] = [tiles.indexOf(Number(slid[1])), tiles.indexOf(0)];
      if (at >= 0) [tiles[at], tiles[blank]] = [0, tiles[at]!];
    } else if (body.includes(SOLVED_TEXT)) tiles = solved(n);
  }
  return { n, tiles };
}

/** The direction word that slides the tile at `target` into the blank. */
function direction(blank: number, target: number, n: number): string {
  if (target === blank + n) return "up";
  if (target === blank - n) return "down";
  if (target === blank + 1) return "left";
  return "right";
}

const MISTAKES = ["invalid_format", "malformed_thinking", "wrong_move"] as const;
const answer = (action: string) => `Let me think.\n<action>${action}</action>`;

export function respondToPuzzle(context: OracleContext): string {
  const board = currentPuzzleBoard(context.promptText);
  // Drawn every turn, so a turn's choices do not depend on whether an error was made before.
  const erring = context.rng.next() < context.errorRate;
  if (!board) return answer("view");
  const { n, tiles } = board;
  const blank = tiles.indexOf(0);
  const plan = solvePuzzle(tiles, n);
  const target = plan.path[0];
  const planned = target === undefined ? "view" : direction(blank, target, n);
  if (!erring) return answer(planned);

  switch (context.rng.choice(MISTAKES)) {
    case "invalid_format":
      return `Let me think. I will move a tile ${planned} next.`;
    case "malformed_thinking":
      return `<think>Let me think.\n<action>${planned}</action>`;
    case "wrong_move": {
      const others = blankNeighbours(blank, n)
        .map((t) => direction(blank, t, n))
        .filter((d) => d !== planned);
      if (others.length > 0 && context.rng.next() < 0.5) return answer(context.rng.choice(others));
      return answer(`slide ${n + 1} ${context.rng.int(1, n)}`);
    }
  }
}

export const slidingPuzzleOracle: OracleSolver = {
  env: "sliding_puzzle",
  matches: (text) => text.includes("===== SLIDING PUZZLE =====") && text.includes("Current Board State:"),
  respond: respondToPuzzle,
};
