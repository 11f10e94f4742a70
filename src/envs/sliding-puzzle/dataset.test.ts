import { describe, expect, it } from "vitest";
import { generateSlidingPuzzleDataset, puzzleDatasetConfig, puzzleDatum, puzzleUserText } from "./dataset.js";
import { PUZZLE_COMMANDS, solvedGrid, type PuzzleState } from "./game.js";
import type { PuzzleMetadata } from "./env.js";

const board3: PuzzleState = {
  size: 3,
  grid: [
    [1, 2, 3],
    [4, 5, 0],
    [7, 8, 6],
  ],
  solution: solvedGrid(3),
  empty_pos: [1, 2],
  commands: { ...PUZZLE_COMMANDS },
};

// literals.md "Sliding puzzle prompt", filled in by hand for the 3×3 board of the spec.
const USER_TEXT_3 =
  "\n===== SLIDING PUZZLE =====\n" +
  "Arrange the 3x3 grid by sliding tiles into the empty space.\n" +
  "- The goal is to arrange numbers from 1 to 8 in order\n" +
  "- Use 'up', 'down', 'left', 'right' to slide in that direction\n" +
  "- Use 'view' to see the current state of the board\n" +
  "\n" +
  "Current Board State:\n" +
  "\n\n  +---------+\n1 | 1  2  3 |\n2 | 4  5    |\n3 | 7  8  6 |\n  +---------+\n     1  2  3 \n" +
  "\n" +
  "Reach the goal state where numbers are ordered 1 through 8 with the empty space (0) at the bottom right.\n" +
  "Valid actions: 'up', 'down', 'left', 'right', or 'slide row col' (e.g., 'slide 1 2').\n" +
  "After thinking, output your chosen action on a new line starting with '<action></action>' like this:\n" +
  "<action>your_action</action>\n" +
  "If you just want to see the board, output <action>view</action>\n" +
  "Think carefully step-by-step before acting.\n";

describe("prompt", () => {
  it("is literals.md's user text, byte for byte", () => {
    expect(puzzleUserText(board3)).toBe(USER_TEXT_3);
  });

  it("is chat-templated with the system text and stripped (no newline after the assistant header)", () => {
    const datum = puzzleDatum(board3, 30, "sliding_puzzle_game");
    expect(datum.message_log).toEqual([
      {
        role: "user",
        content:
          "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n" +
          USER_TEXT_3 +
          "<|im_end|>\n<|im_start|>assistant",
      },
    ]);
    expect(datum.stop_strings).toEqual(["</action>"]);
    expect(datum.task_name).toBe("sliding_puzzle_game");
    expect(datum.extra_env_info).toEqual({ game_state: board3, num_moves: 0, max_moves: 30 });
    expect(Object.keys(datum.extra_env_info!)).toEqual(["game_state", "num_moves", "max_moves"]);
  });
});

describe("dataset", () => {
  const request = (seed: number, config: Record<string, unknown> = {}, size = 16) => ({
    size,
    seed,
    config,
    taskName: "puzzles",
  });

  it("is the same for the same seed, different for another", () => {
    const a = generateSlidingPuzzleDataset(request(3, { size: 4, shuffle_moves: 30 }));
    expect(generateSlidingPuzzleDataset(request(3, { size: 4, shuffle_moves: 30 }))).toEqual(a);
    expect(generateSlidingPuzzleDataset(request(4, { size: 4, shuffle_moves: 30 }))).not.toEqual(a);
    // A longer dataset starts with the shorter one.
    expect(generateSlidingPuzzleDataset(request(3, { size: 4, shuffle_moves: 30 }, 20)).slice(0, 16)).toEqual(a);
  });

  it("never starts solved, with sides in 2…size, and carries the task name and budget", () => {
    for (let seed = 0; seed < 10; seed++) {
      for (const datum of generateSlidingPuzzleDataset(request(seed, { size: 5, shuffle_moves: 3, max_moves: 12 }))) {
        const meta = datum.extra_env_info as unknown as PuzzleMetadata;
        const { size, grid, solution, empty_pos } = meta.game_state;
        expect(size).toBeGreaterThanOrEqual(2);
        expect(size).toBeLessThanOrEqual(5);
        expect(grid).not.toEqual(solution);
        expect(grid[empty_pos[0]]![empty_pos[1]]).toBe(0);
        expect(meta).toMatchObject({ num_moves: 0, max_moves: 12 });
        expect(datum.task_name).toBe("puzzles");
        expect(datum.message_log[0]!.content).toContain(puzzleUserText(meta.game_state));
      }
    }
  });

  it("draws every side from 2 to size", () => {
    const sides = new Set(
      generateSlidingPuzzleDataset(request(1, { size: 4 }, 60)).map(
        (d) => (d.extra_env_info as unknown as PuzzleMetadata).game_state.size,
      ),
    );
    expect([...sides].sort()).toEqual([2, 3, 4]);
  });

  it("has the literals.md defaults and rejects unknown or bad settings", () => {
    expect(puzzleDatasetConfig({})).toEqual({ size: 4, shuffle_moves: 100, max_moves: 30 });
    expect(() => puzzleDatasetConfig({ sizes: 3 })).toThrow(/unknown key 'sizes'/);
    expect(() => puzzleDatasetConfig({ size: 1 })).toThrow(/dataset\.config\.size: expected an integer >= 2, got 1/);
    expect(() => puzzleDatasetConfig({ shuffle_moves: 2.5 })).toThrow(/shuffle_moves/);
    expect(() => puzzleDatasetConfig({ max_moves: "30" })).toThrow(/max_moves/);
  });
});
