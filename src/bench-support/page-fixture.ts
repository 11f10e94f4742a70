/**
 * What the page and memory benchmarks (bench/page.ts, bench/memory.ts) run and open: a sliding-puzzle scenario whose
 * scripted policy never solves its board (the blank back and forth, with a model-sized thinking text before each
 * action), so every sample runs exactly `turns` turns and ends at the turn limit; and seeded log-probabilities of a
 * model's kind (text policies give 0 per token; a model's are float32 values), put into a run's assistant messages
 * before it is exported.
 */

import { Rng } from "../core/index.js";
import type { Scenario } from "../scenario/schema.js";
import { puzzleData } from "./common.js";

export const FIXTURE_TASK = "sliding_puzzle_game";

export interface FixtureConfig {
  samples: number;
  turns: number;
  seed: number;
  mode?: "sync" | "async";
}

const OPENERS = [
  "The blank is not next to the tiles I need yet.",
  "Looking at the board, the top rows are almost in order.",
  "I should keep the solved tiles where they are.",
  "The last move did not change the first row.",
  "Moving the blank sideways keeps the first column intact.",
];
const MIDDLES = [
  "If I slide the tile beside the blank, the row below stays as it is.",
  "A vertical move here would undo the progress on the left side.",
  "The tile that belongs in this corner is two moves away.",
  "Counting the misplaced tiles, most of them are in the lower half.",
  "I will try the other side first and come back if it does not help.",
  "The parity of the blank's position tells me a loop is needed.",
];

/** One scripted response: a thinking text of 150–400 bytes, then the move (`</action>` is the stop string). */
export function fixtureResponse(seed: number, sample: number, turn: number): string {
  const rng = Rng.derive(seed, "response", sample, turn);
  const parts = [OPENERS[rng.int(0, OPENERS.length - 1)]!];
  for (let i = rng.int(1, 4); i > 0; i--) parts.push(MIDDLES[rng.int(0, MIDDLES.length - 1)]!);
  const move = (sample + turn) % 2 ? "left" : "right";
  return `<think>\n${parts.join(" ")} So I move ${move}.\n</think>\n<action>${move}</action>`;
}

/** The scenario: `samples` 4×4 boards shuffled by 101 moves, `turns` turns each, never solved, never out of moves. */
export function fixtureScenario(cfg: FixtureConfig): Scenario {
  const data = puzzleData({ samples: cfg.samples, side: 4, shuffleMoves: 101, maxMoves: cfg.turns + 10, seed: cfg.seed });
  return {
    mode: cfg.mode ?? "sync",
    max_seq_len: 1 << 20,
    max_rollout_turns: cfg.turns,
    envs: { [FIXTURE_TASK]: { env: "sliding_puzzle", config: {} } },
    samples: data.map((d, idx) => ({ ...d, idx })),
    policy: {
      kind: "scripted",
      responses: Array.from({ length: cfg.samples }, (_, s) => Array.from({ length: cfg.turns }, (_, t) => fixtureResponse(cfg.seed, s, t))),
    },
  } as Scenario;
}

/** Seeded log-probabilities of a model's kind: float32 values in (−8, 0], most of them near 0. */
export function fixtureLogprobs(seed: number, sample: number, turn: number, count: number): number[] {
  const rng = Rng.derive(seed, "logprobs", sample, turn);
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    const u = rng.next();
    out[i] = Math.fround(-(u * u * u) * 8);
  }
  return out;
}

/**
 * The raw size of a run's data as the memory benchmark defines it: every message's token ids at 4 bytes each, its
 * log-probabilities at 4 bytes each, and its text as UTF-8 bytes (nothing else: no metadata, no turn records).
 */
export interface RawSize {
  tokenIds: number;
  logprobs: number;
  textBytes: number;
  total: number;
}

export function rawSize(messages: Iterable<{ content: string; token_ids: ArrayLike<number>; generation_logprobs?: ArrayLike<number> | null }>): RawSize {
  const encoder = new TextEncoder();
  let tokenIds = 0;
  let logprobs = 0;
  let textBytes = 0;
  for (const m of messages) {
    tokenIds += m.token_ids.length;
    logprobs += m.generation_logprobs?.length ?? 0;
    textBytes += encoder.encode(m.content).length;
  }
  return { tokenIds: tokenIds * 4, logprobs: logprobs * 4, textBytes, total: (tokenIds + logprobs) * 4 + textBytes };
}
