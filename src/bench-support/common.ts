/**
 * What the rollout benchmarks (bench/engine.ts, bench/async-sync.ts) share: the puzzle batch they run, counting
 * wrappers around the tokenizer, the oracle solver and the environment (so each benchmark can show that its
 * contenders did the same work), and small statistics helpers.
 */

import { Rng, type EnvironmentInterface, type EnvMessage, type Metadata, type TokenizerInterface } from "../core/index.js";
import { generatePuzzle, puzzleDatum } from "../envs/sliding-puzzle/index.js";
import type { OracleSolver } from "../policy/oracle/index.js";
import { inputBatchFor, type PreparedScenario } from "../scenario/run.js";
import type { DatasetDatum } from "../envs/types.js";

export const PUZZLE_TASK = "sliding_puzzle_game";

export interface PuzzleBatchConfig {
  samples: number;
  /** Board side of every puzzle (the dataset generator draws a side in 2…size; the benchmarks fix it). */
  side: number;
  /** Random blank moves from the solved board (made odd, as the dataset generator does). */
  shuffleMoves: number;
  maxMoves: number;
  seed: number;
}

/** One puzzle datum per sample, each board `side`×`side`, drawn in the dataset generator's order from one seed. */
export function puzzleData(cfg: PuzzleBatchConfig): DatasetDatum[] {
  const rng = new Rng(cfg.seed);
  const shuffle = cfg.shuffleMoves % 2 === 0 ? cfg.shuffleMoves + 1 : cfg.shuffleMoves;
  return Array.from({ length: cfg.samples }, () => puzzleDatum(generatePuzzle(cfg.side, shuffle, rng), cfg.maxMoves, PUZZLE_TASK));
}

/** The rollout's input batch for some data, tokenized as the scenario runner tokenizes it. */
export function inputBatchOf(data: DatasetDatum[], tokenizer: TokenizerInterface) {
  return inputBatchFor({ data: data as unknown as PreparedScenario["data"], taskToEnv: {}, environments: {} }, tokenizer);
}

/** Calls counted by the wrappers below. */
export interface WorkCounts {
  oracle_calls: number;
  /** `step` calls (a sync turn steps its whole batch in one call, an async turn one sample per call). */
  env_step_calls: number;
  /** Samples stepped, over all `step` calls. */
  env_sample_steps: number;
  encode_calls: number;
  encoded_tokens: number;
  decode_calls: number;
}

export const zeroCounts = (): WorkCounts => ({
  oracle_calls: 0,
  env_step_calls: 0,
  env_sample_steps: 0,
  encode_calls: 0,
  encoded_tokens: 0,
  decode_calls: 0,
});

/** A tokenizer that counts its calls into `counts` (and otherwise is `base`). */
export function countingTokenizer(base: TokenizerInterface, counts: WorkCounts): TokenizerInterface {
  return {
    padTokenId: base.padTokenId,
    eosTokenId: base.eosTokenId,
    generationPrefill: base.generationPrefill,
    encode(text) {
      const ids = base.encode(text);
      counts.encode_calls += 1;
      counts.encoded_tokens += ids.length;
      return ids;
    },
    decode(ids, options) {
      counts.decode_calls += 1;
      return base.decode(ids, options);
    },
  };
}

export function countingSolver(base: OracleSolver, counts: WorkCounts): OracleSolver {
  return {
    env: base.env,
    matches: (text) => base.matches(text),
    respond(context) {
      counts.oracle_calls += 1;
      return base.respond(context);
    },
  };
}

export function countingEnv(base: EnvironmentInterface, counts: WorkCounts): EnvironmentInterface {
  return {
    step(logs: EnvMessage[][], metadata: Metadata[]) {
      counts.env_step_calls += 1;
      counts.env_sample_steps += logs.length;
      return base.step(logs, metadata);
    },
  };
}

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export const round = (x: number, digits = 1): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** A short FNV-1a hash of a string, to compare transcripts without keeping them. */
export function hashText(text: string, h = 0x811c9dc5): number {
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
