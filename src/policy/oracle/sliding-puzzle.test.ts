import { describe, expect, it } from "vitest";
import { Rng, wrapToolResponseEnvelope, type EnvMessage, type Metadata } from "../../core/index.js";
import { generateSlidingPuzzleDataset, puzzleDatum, SlidingPuzzleEnv, solvedGrid } from "../../envs/sliding-puzzle/index.js";
import type { DatasetDatum } from "../../envs/types.js";
import { cutAtStopStrings } from "../text-policy.js";
import { blankNeighbours, heuristic, slide, solvePuzzle } from "./puzzle-search.js";
import { currentPuzzleBoard, slidingPuzzleOracle } from "./sliding-puzzle.js";

interface Episode {
  total: number;
  responses: string[];
  observations: string[];
}

/** Drives the oracle against the environment as a rollout would: the context is prompt + responses + observations. */
function play(datum: DatasetDatum, seed: number, errorRate = 0, envelope = false, maxTurns = 60): Episode {
  const env = new SlidingPuzzleEnv();
  let context = datum.message_log[0]!.content;
  const log: EnvMessage[] = [{ role: "user", content: context }];
  let metadata: Metadata = datum.extra_env_info;
  let stops = datum.stop_strings;
  const episode: Episode = { total: 0, responses: [], observations: [] };
  for (let turn = 0; turn < maxTurns; turn++) {
    const text = slidingPuzzleOracle.respond({ promptText: context, stopStrings: stops, rng: Rng.derive(seed, 0, turn), errorRate });
    const cut = cutAtStopStrings(text, stops);
    context += cut ?? `${text}<|im_end|>`; // an uncut response ends with EOS
    log.push({ role: "assistant", content: cut ?? text });
    episode.responses.push(cut ?? text);
    const out = env.step([log], [metadata]);
    const observation = out.observations[0]!;
    log.push(observation);
    episode.observations.push(observation.content);
    context += envelope ? wrapToolResponseEnvelope(observation.content) : observation.content;
    episode.total += (out.rewards as number[])[0]!;
    if (out.terminateds[0]) return episode;
    metadata = out.metadata[0] ?? metadata;
    stops = out.next_stop_strings?.[0] ?? null;
  }
  throw new Error("the episode did not end");
}

const board = (grid: number[][]) => puzzleDatum(
  { size: grid.length, grid, solution: solvedGrid(grid.length), empty_pos: emptyOf(grid), commands: {} },
  30,
  "sliding_puzzle_game",
);
const emptyOf = (grid: number[][]): [number, number] => {
  const at = grid.flat().indexOf(0);
  return [Math.floor(at / grid.length), at % grid.length];
};

describe("search", () => {
  it("finds shortest paths, and its heuristic is zero only when solved", () => {
    expect(solvePuzzle([1, 2, 3, 4, 5, 6, 7, 8, 0], 3)).toEqual({ path: [], complete: true, optimal: true });
    expect(solvePuzzle([1, 2, 3, 4, 5, 0, 7, 8, 6], 3).path).toEqual([8]);
    // The hardest 8-puzzle boards need 31 moves.
    const hardest = solvePuzzle([8, 6, 7, 2, 5, 4, 3, 0, 1], 3);
    expect(hardest).toMatchObject({ complete: true, optimal: true });
    expect(hardest.path).toHaveLength(31);
    expect(heuristic([1, 2, 3, 4, 5, 6, 7, 8, 0], 3)).toBe(0);
    expect(heuristic([2, 1, 3, 4, 5, 6, 7, 8, 0], 3)).toBe(4); // two Manhattan steps + one linear conflict
  });

  it("updates the heuristic incrementally exactly as a full recount", () => {
    const rng = new Rng(3);
    for (const n of [3, 4, 5]) {
      const tiles = solvedGrid(n).flat();
      let h = heuristic(tiles, n);
      for (let step = 0; step < 400; step++) {
        const blank = tiles.indexOf(0);
        h += slide(tiles, n, blank, rng.choice(blankNeighbours(blank, n)));
        expect(h).toBe(heuristic(tiles, n));
      }
    }
  });

  it("falls back to a longer path, or to getting closer, past its budget", () => {
    const tiles = [8, 6, 7, 2, 5, 4, 3, 0, 1];
    const longer = solvePuzzle(tiles, 3, { idaNodes: 10, astarExpansions: 100_000 });
    expect(longer).toMatchObject({ complete: true, optimal: false });
    expect(longer.path.length).toBeGreaterThanOrEqual(31);
    const partial = solvePuzzle(tiles, 3, { idaNodes: 10, astarExpansions: 50 });
    expect(partial.complete).toBe(false);
    expect(partial.path.length).toBeGreaterThan(0);
    expect(blankNeighbours(7, 3)).toContain(partial.path[0]);
  });
});

describe("reading the context", () => {
  it("takes the prompt's board, then replays moves and renders from the observations", () => {
    const datum = board([
      [1, 2, 3],
      [4, 5, 0],
      [7, 8, 6],
    ]);
    const prompt = datum.message_log[0]!.content;
    expect(currentPuzzleBoard(prompt)).toEqual({ n: 3, tiles: [1, 2, 3, 4, 5, 0, 7, 8, 6] });
    const moved = `${prompt}<action>right</action><environment>\nSlid tile 5 right.\n</environment>\n`;
    expect(currentPuzzleBoard(moved)!.tiles).toEqual([1, 2, 3, 4, 0, 5, 7, 8, 6]);
    const failed = `${moved}<action>slide 9 9</action><environment>\nInvalid position. Row/column must be between 1 and 3.\n</environment>\n`;
    expect(currentPuzzleBoard(failed)!.tiles).toEqual([1, 2, 3, 4, 0, 5, 7, 8, 6]);
    const viewed =
      `${failed}<action>view</action>` +
      wrapToolResponseEnvelope(
        "<environment>\n\n\n  +---------+\n1 | 1  2  3 |\n2 | 4     5 |\n3 | 7  8  6 |\n  +---------+\n     1  2  3 \n\nViewing the board. No move made.</environment>\n",
      );
    expect(currentPuzzleBoard(viewed)!.tiles).toEqual([1, 2, 3, 4, 0, 5, 7, 8, 6]);
    expect(currentPuzzleBoard("no board here")).toBeNull();
  });

  it("recognises puzzle prompts only", () => {
    expect(slidingPuzzleOracle.matches(board([[1, 0], [3, 2]]).message_log[0]!.content)).toBe(true);
    expect(slidingPuzzleOracle.matches("Solve: 3 + 5")).toBe(false);
  });

  it("answers a direction for the tile that moves", () => {
    const prompt = board([
      [1, 2, 3],
      [4, 5, 6],
      [7, 0, 8],
    ]).message_log[0]!.content;
    const reply = slidingPuzzleOracle.respond({ promptText: prompt, stopStrings: ["</action>"], rng: new Rng(0), errorRate: 0 });
    expect(reply).toBe("Let me think.\n<action>left</action>");
  });
});

describe("against the environment", () => {
  it("solves 20 seeded datasets (size 3, shuffle_moves 20, max_moves 30), raw and enveloped observations", () => {
    for (let seed = 0; seed < 20; seed++) {
      const data = generateSlidingPuzzleDataset({ size: 3, seed, config: { size: 3, shuffle_moves: 20, max_moves: 30 }, taskName: "t" });
      data.forEach((datum, i) => {
        const episode = play(datum, seed, 0, (seed + i) % 2 === 1);
        expect(episode.total).toBe(1.0);
        expect(episode.observations.at(-1)).toBe("<environment>\nCongratulations! You've solved the puzzle!\n</environment>\n");
      });
    }
  });

  it("solves 4×4 boards", () => {
    const data = generateSlidingPuzzleDataset({ size: 3, seed: 11, config: { size: 4, shuffle_moves: 41, max_moves: 60 }, taskName: "t" });
    for (const datum of data) expect(play(datum, 11, 0, false, 80).total).toBe(1.0);
  });

  it("with errorRate 0.3 makes each kind of mistake, deterministically for a seed", () => {
    const config = { size: 3, shuffle_moves: 20, max_moves: 30 };
    const runs = (seed: number) =>
      generateSlidingPuzzleDataset({ size: 3, seed, config, taskName: "t" }).map((d) => play(d, seed, 0.3));
    const kinds = new Set<string>();
    let solved = 0;
    for (let seed = 0; seed < 10; seed++) {
      const first = runs(seed);
      expect(runs(seed)).toEqual(first);
      for (const episode of first) {
        solved += episode.total;
        for (const r of episode.responses) {
          if (!r.includes("<action>")) kinds.add("invalid_format");
          else if (r.startsWith("<think>")) kinds.add("malformed_thinking");
          else if (r.includes("slide 4 ")) kinds.add("out_of_range");
        }
        for (const o of episode.observations) if (o.includes("Invalid response format")) kinds.add("format_seen");
      }
    }
    expect([...kinds].sort()).toEqual(["format_seen", "invalid_format", "malformed_thinking", "out_of_range"]);
    expect(solved).toBeGreaterThan(15); // mistakes cost moves, but most boards still get solved
    expect(runs(100)).not.toEqual(runs(101));
  });
});
