import { describe, expect, it } from "vitest";
import { Rng } from "../../core/index.js";
import { generatePuzzle, PUZZLE_COMMANDS, puzzleInitText, puzzleStep, renderPuzzle, solvedGrid, type PuzzleState } from "./game.js";

const state = (grid: number[][], empty: [number, number]): PuzzleState => ({
  size: grid.length,
  grid,
  solution: solvedGrid(grid.length),
  empty_pos: empty,
  commands: { ...PUZZLE_COMMANDS },
});

// upstream-rollouts.md §5.1: the blank at (1, 2).
const board3 = () =>
  state(
    [
      [1, 2, 3],
      [4, 5, 0],
      [7, 8, 6],
    ],
    [1, 2],
  );

describe("render", () => {
  it("matches the 3×3 literal of the spec", () => {
    expect(renderPuzzle(board3())).toBe(
      "\n\n  +---------+\n1 | 1  2  3 |\n2 | 4  5    |\n3 | 7  8  6 |\n  +---------+\n     1  2  3 ",
    );
  });

  it("matches the 4×4 literal of literals.md (odd centring space on the right)", () => {
    const grid = [
      [1, 2, 3, 4],
      [5, 6, 7, 8],
      [9, 10, 11, 12],
      [13, 14, 0, 15],
    ];
    expect(renderPuzzle(state(grid, [3, 2]))).toBe(
      "\n\n  +----------------+\n1 |  1   2   3   4 |\n2 |  5   6   7   8 |\n3 |  9  10  11  12 |\n4 | 13  14      15 |\n  +----------------+\n     1   2   3   4  ",
    );
  });

  it("renders a 2×2 board", () => {
    expect(renderPuzzle(state([[1, 2], [0, 3]], [1, 0]))).toBe(
      "\n\n  +------+\n1 | 1  2 |\n2 |    3 |\n  +------+\n     1  2 ",
    );
  });
});

describe("init text", () => {
  it("is the reference's welcome text", () => {
    expect(puzzleInitText({ size: 3 })).toBe(
      "\n===== SLIDING PUZZLE =====\nArrange the 3x3 grid by sliding tiles into the empty space.\n- The goal is to arrange numbers from 1 to 8 in order\n- Use 'up', 'down', 'left', 'right' to slide in that direction\n- Use 'view' to see the current state of the board",
    );
    expect(puzzleInitText({ size: 4 })).toContain("Arrange the 4x4 grid");
    expect(puzzleInitText({ size: 4 })).toContain("from 1 to 15 in order");
  });
});

describe("generate", () => {
  it("builds the solved board, the commands and a pair empty_pos", () => {
    const s = generatePuzzle(3, 0, new Rng(1));
    expect(s.grid).toEqual(solvedGrid(3));
    expect(s.solution).toEqual([
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 0],
    ]);
    expect(s.empty_pos).toEqual([2, 2]);
    expect(s.commands).toEqual({
      up: "Slide tile below empty space up",
      down: "Slide tile above empty space down",
      left: "Slide tile to the right of empty space left",
      right: "Slide tile to the left of empty space right",
      view: "View the current state of the board",
    });
  });

  it("shuffles with legal blank moves: empty_pos points at the 0 and the tiles stay a permutation", () => {
    for (let seed = 0; seed < 20; seed++) {
      const s = generatePuzzle(4, 37, new Rng(seed));
      const [r, c] = s.empty_pos;
      expect(s.grid[r]![c]).toBe(0);
      expect(s.grid.flat().sort((a, b) => a - b)).toEqual([...Array(16).keys()]);
      expect(s.grid).not.toEqual(s.solution); // an odd number of blank moves
    }
  });

  it("is deterministic for a seed", () => {
    expect(generatePuzzle(3, 21, new Rng(7))).toEqual(generatePuzzle(3, 21, new Rng(7)));
  });
});

describe("step", () => {
  const cases: [string, string][] = [
    ["up", "Congratulations! You've solved the puzzle!"],
    ["down", "Slid tile 3 down."],
    ["left", "Cannot slide left."],
    ["right", "Slid tile 5 right."],
    ["slide 2 2", "Slid tile 5 into the empty space."],
    ["slide 1 3", "Slid tile 3 into the empty space."],
    ["slide 3 3", "Congratulations! You've solved the puzzle!"],
    ["slide 1 1", "Tile must be adjacent to the empty space."],
    ["slide 2 3", "Tile must be adjacent to the empty space."],
    ["slide 9 9", "Invalid position. Row/column must be between 1 and 3."],
    ["slide 0 1", "Invalid position. Row/column must be between 1 and 3."],
    ["slide -1 2", "Invalid position. Row/column must be between 1 and 3."],
    ["slide a b", "Invalid input format. Use: slide row col"],
    ["slide 1.5 2", "Invalid input format. Use: slide row col"],
    ["slide 1 2 3", "Invalid input format. Use: slide row col"],
    ["slide 2", "Invalid input format. Use: slide row col"],
    ["slide  2\t2", "Slid tile 5 into the empty space."],
    ["slide +2 0_2", "Slid tile 5 into the empty space."],
    ["slide", "Unknown command. Type 'help' to see available commands."],
    ["Up", "Unknown command. Type 'help' to see available commands."],
    ["move up", "Unknown command. Type 'help' to see available commands."],
    ["help", "Unknown command. Type 'help' to see available commands."],
  ];
  it.each(cases)("%j → %j", (action, response) => {
    expect(puzzleStep(action, board3()).response).toBe(response);
  });

  it("moves the tile into the blank and never mutates its input", () => {
    const before = board3();
    const snapshot = structuredClone(before);
    const result = puzzleStep("right", before);
    expect(before).toEqual(snapshot);
    expect(result.state.grid).toEqual([
      [1, 2, 3],
      [4, 0, 5],
      [7, 8, 6],
    ]);
    expect(result.state.empty_pos).toEqual([1, 1]);
    expect(result).toMatchObject({ reward: 0, terminated: false });
  });

  it("rewards 1.0 and terminates only on the solving move", () => {
    const result = puzzleStep("up", board3());
    expect(result).toMatchObject({ reward: 1.0, terminated: true });
    expect(result.state.grid).toEqual(solvedGrid(3));
    expect(result.state.empty_pos).toEqual([2, 2]);
    for (const action of ["down", "left", "slide 9 9", "view", "foo"]) {
      expect(puzzleStep(action, board3())).toMatchObject({ reward: 0, terminated: false });
    }
  });
});
