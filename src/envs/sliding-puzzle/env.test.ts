import { describe, expect, it } from "vitest";
import type { EnvMessage } from "../../core/index.js";
import { PUZZLE_COMMANDS, solvedGrid, type PuzzleState } from "./game.js";
import { parsePuzzleAction, processPuzzleTurn, SlidingPuzzleEnv, slidingPuzzleSuccessRate, type PuzzleMetadata } from "./env.js";
import { slidingPuzzleEnvironment } from "./index.js";

const RENDER_3 = "\n\n  +---------+\n1 | 1  2  3 |\n2 | 4  5    |\n3 | 7  8  6 |\n  +---------+\n     1  2  3 ";
const VIEW_TEXT = `<environment>\n${RENDER_3}\n\nViewing the board. No move made.</environment>\n`;
const INVALID_TEXT = `<environment>\n${RENDER_3}\n\nInvalid response format no move made. Try <action></action> like this: <action>your_action</action></environment>\n`;

function metadata(maxMoves: number, numMoves = 0): PuzzleMetadata {
  const game: PuzzleState = {
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
  return { game_state: game, num_moves: numMoves, max_moves: maxMoves };
}

const said = (text: string): EnvMessage[] => [
  { role: "user", content: "prompt" },
  { role: "assistant", content: text },
];

describe("action parsing", () => {
  it.each([
    ["I think <action>view</action>", "view"],
    ["<ACTION> left </Action>", "left"],
    ["<action>up</action> then <action>down</action>", "down"],
    ["<action>up</action><action>down", null],
    ["<action>up", null],
    ["no tags", null],
    ["</action>up<action>", null],
    ["<action></action>", ""],
    ["<Action>\n slide 1 2 \n</ACTION> trailing", "slide 1 2"],
    // Python finds the tags in text.lower(), where 'İ' is two code points, and slices the original text.
    ["x <action>İ up</action>", "İ up<"],
    ["😀<action>up</action>", "up"],
  ])("%j → %j", (text, expected) => {
    expect(parsePuzzleAction(text)).toBe(expected);
  });
});

describe("process_turn", () => {
  it("follows the spec's example trace (3×3, max_moves = 2)", () => {
    let meta: PuzzleMetadata = metadata(2);

    const view = processPuzzleTurn(said("I think <action>view</action>"), meta);
    expect(view.observation).toEqual({ role: "environment", content: VIEW_TEXT });
    expect(view).toMatchObject({ reward: 0, terminated: false, nextStopStrings: ["</action>"] });
    expect(view.nextMetadata).toEqual(meta);
    expect(view.nextMetadata).not.toBe(meta);
    meta = view.nextMetadata!;

    const noTags = processPuzzleTurn(said("no tags"), meta);
    expect(noTags.observation.content).toBe(INVALID_TEXT);
    expect(noTags).toMatchObject({ reward: 0, terminated: false, nextStopStrings: ["</action>"], nextMetadata: null });

    const left = processPuzzleTurn(said("<ACTION> left </Action>"), meta);
    expect(left.observation.content).toBe("<environment>\nCannot slide left.\n</environment>\n");
    expect(left).toMatchObject({ reward: 0, terminated: false, nextStopStrings: ["</action>"] });
    expect(left.nextMetadata!.num_moves).toBe(1);
    expect(left.nextMetadata!.game_state).toEqual(meta.game_state);
    meta = left.nextMetadata!;

    const slide = processPuzzleTurn(said("<action>slide 9 9</action>"), meta);
    expect(slide.observation.content).toBe(
      "<environment>\nInvalid position. Row/column must be between 1 and 3.\n</environment>\n",
    );
    expect(slide).toMatchObject({ reward: 0, terminated: false });
    expect(slide.nextMetadata!.num_moves).toBe(2);
    meta = slide.nextMetadata!;

    // The budget is spent: the action (even a solving one) is ignored.
    for (const text of ["<action>foo</action>", "<action>up</action>"]) {
      const last = processPuzzleTurn(said(text), meta);
      expect(last.observation).toEqual({ role: "environment", content: "<error>Maximum moves (2) reached.</error>" });
      expect(last).toMatchObject({ reward: 0, terminated: true, nextStopStrings: null, nextMetadata: null });
    }
  });

  it("gives every game-step text in the observation envelope, counting each as a move", () => {
    const texts: [string, string][] = [
      ["down", "Slid tile 3 down."],
      ["right", "Slid tile 5 right."],
      ["slide 2 2", "Slid tile 5 into the empty space."],
      ["slide 1 1", "Tile must be adjacent to the empty space."],
      ["slide x 1", "Invalid input format. Use: slide row col"],
      ["VIEW", "Unknown command. Type 'help' to see available commands."],
    ];
    for (const [action, response] of texts) {
      const turn = processPuzzleTurn(said(`<action>${action}</action>`), metadata(30, 5));
      expect(turn.observation.content).toBe(`<environment>\n${response}\n</environment>\n`);
      expect(turn.nextMetadata!.num_moves).toBe(6);
      expect(turn.terminated).toBe(false);
    }
  });

  it("ends with reward 1.0, the solved text and no metadata on the solving move", () => {
    const turn = processPuzzleTurn(said("Let me think.\n<action>up</action>"), metadata(30));
    expect(turn.observation.content).toBe("<environment>\nCongratulations! You've solved the puzzle!\n</environment>\n");
    expect(turn).toMatchObject({ reward: 1.0, terminated: true, nextStopStrings: ["</action>"], nextMetadata: null });
  });

  it("reads the last message only when it is the assistant's", () => {
    const log: EnvMessage[] = [
      { role: "assistant", content: "<action>up</action>" },
      { role: "user", content: "<action>up</action>" },
    ];
    expect(processPuzzleTurn(log, metadata(30)).observation.content).toBe(INVALID_TEXT);
    expect(processPuzzleTurn([], metadata(30)).observation.content).toBe(INVALID_TEXT);
  });

  it("never mutates its inputs and keeps extra metadata keys", () => {
    const meta = { ...metadata(30), note: "kept" };
    const before = structuredClone(meta);
    const turn = processPuzzleTurn(said("<action>right</action>"), meta);
    expect(meta).toEqual(before);
    expect(turn.nextMetadata).toMatchObject({ note: "kept", num_moves: 1 });
    expect(turn.nextMetadata!.game_state.empty_pos).toEqual([1, 1]);
  });
});

describe("SlidingPuzzleEnv", () => {
  it("steps a batch, aligned with its input", () => {
    const env = new SlidingPuzzleEnv();
    const out = env.step([said("<action>up</action>"), said("nothing"), said("<action>foo</action>")], [
      metadata(30),
      metadata(30),
      metadata(1, 1),
    ]);
    expect(out.rewards).toEqual([1.0, 0, 0]);
    expect(out.terminateds).toEqual([true, false, true]);
    expect(out.next_stop_strings).toEqual([["</action>"], ["</action>"], null]);
    expect(out.metadata).toEqual([null, null, null]);
    expect(out.observations.map((o) => o.role)).toEqual(["environment", "environment", "environment"]);
    expect(out.answers).toBeNull();
  });

  it("reports sliding_puzzle_success_rate = mean(total_reward == 1.0)", () => {
    expect(slidingPuzzleSuccessRate([1, 0, 1, 0.5])).toBe(0.5);
    expect(slidingPuzzleSuccessRate([])).toBe(0);
    const env = new SlidingPuzzleEnv();
    const batch = { total_reward: [1, 1, 0], idx: [0, 1, 2] };
    expect(env.globalPostProcessAndMetrics(batch)).toEqual([batch, { sliding_puzzle_success_rate: 2 / 3 }]);
    expect(env.globalPostProcessAndMetrics({ idx: [0, 1] })[1]).toEqual({ sliding_puzzle_success_rate: 0 });
  });
});

describe("definition", () => {
  it("is named as scenarios use it, takes an empty config and rejects unknown keys", () => {
    expect(slidingPuzzleEnvironment.name).toBe("sliding_puzzle");
    expect(slidingPuzzleEnvironment.defaultTaskName).toBe("sliding_puzzle_game");
    expect(slidingPuzzleEnvironment.create({})).toBeInstanceOf(SlidingPuzzleEnv);
    expect(() => slidingPuzzleEnvironment.create({ size: 3 })).toThrow(/unknown key 'size'/);
  });

  it("views a board as a grid, and an ended episode as text", () => {
    const view = slidingPuzzleEnvironment.view(metadata(30, 4) as unknown as Record<string, unknown>);
    expect(view).toEqual({
      kind: "grid",
      title: "Sliding puzzle 3×3",
      size: 3,
      cells: [
        [1, 2, 3],
        [4, 5, null],
        [7, 8, 6],
      ],
      caption: "Moves made: 4 of 30",
    });
    expect(slidingPuzzleEnvironment.view(null).kind).toBe("text");
  });
});
