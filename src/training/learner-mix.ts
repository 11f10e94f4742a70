/**
 * States the learner reaches, labelled by the oracle (DAgger): a policy whose turns come from the learner (a model
 * being trained) with probability `rate` per sample and turn, and from the labelled oracle otherwise. The learner's
 * turns stay in the context and are never learned (mask `2`, like the oracle's mistakes); the oracle's turns after
 * them are what a model needs and never sees in the oracle's own rollouts: the way back from the model's own slips
 * (a calculator call with a misspelled operation, a puzzle move from a board it misread). docs/training.md, section 1.
 */

import { mergeOutputRows, outputRow, Rng, type GenerateOptions, type GenerationDatumSpec, type GenerationInterface, type GenerationOutputSpec } from "../core/index.js";

export interface LearnerMixOptions {
  /** The share of turns the learner writes, 0–1, drawn per sample and turn. */
  rate: number;
  seed: number;
  padTokenId: number;
}

export interface LearnerMix {
  policy: GenerationInterface;
  /** The turns (per batch position) the learner wrote. */
  learnerTurns: Map<number, Set<number>>;
}

/** The rows `rows` of a generation input, as an input of their own. */
function pickRows(data: GenerationDatumSpec, rows: number[]): GenerationDatumSpec {
  const width = Math.max(1, ...rows.map((r) => data.input_lengths[r]!));
  const pick = <T>(values: readonly T[] | undefined) => (values ? rows.map((r) => values[r]!) : undefined);
  return {
    input_ids: rows.map((r) => data.input_ids[r]!.subarray(0, width)),
    input_lengths: pick(data.input_lengths)!,
    stop_strings: pick(data.stop_strings)!,
    max_new_tokens: pick(data.max_new_tokens)!,
    ...(data.sample_ids ? { sample_ids: pick(data.sample_ids)!, turns: pick(data.turns ?? data.sample_ids.map(() => 0))! } : {}),
    ...(data.context_ids ? { context_ids: pick(data.context_ids)! } : {}),
  };
}

export function learnerMixPolicy(oracle: GenerationInterface, learner: GenerationInterface, options: LearnerMixOptions): LearnerMix {
  if (!(options.rate >= 0 && options.rate <= 1)) throw new RangeError(`the learner's share of turns must be within 0–1, got ${options.rate}`);
  const learnerTurns = new Map<number, Set<number>>();
  const byLearner = (sampleId: number, turn: number) => Rng.derive(options.seed, "learner", sampleId, turn).next() < options.rate;

  const generate = async (data: GenerationDatumSpec, greedy: boolean, generateOptions?: GenerateOptions): Promise<GenerationOutputSpec> => {
    const ids = data.sample_ids ?? data.input_lengths.map((_, i) => i);
    const turns = data.turns ?? ids.map(() => 0);
    const learnerRows: number[] = [];
    const oracleRows: number[] = [];
    ids.forEach((id, row) => (byLearner(id, turns[row]!) ? learnerRows : oracleRows).push(row));
    const run = async (policy: GenerationInterface, rows: number[]) =>
      rows.length === 0 ? null : policy.generate(pickRows(data, rows), greedy, generateOptions);
    const [fromLearner, fromOracle] = await Promise.all([run(learner, learnerRows), run(oracle, oracleRows)]);
    for (const row of learnerRows) {
      if (!learnerTurns.has(ids[row]!)) learnerTurns.set(ids[row]!, new Set());
      learnerTurns.get(ids[row]!)!.add(turns[row]!);
    }
    const rows = new Array<GenerationOutputSpec>(ids.length);
    learnerRows.forEach((row, k) => (rows[row] = outputRow(fromLearner!, k)));
    oracleRows.forEach((row, k) => (rows[row] = outputRow(fromOracle!, k)));
    return mergeOutputRows(rows, options.padTokenId);
  };

  const policy: GenerationInterface = {
    generate,
    async *generateAsync(data, greedy, generateOptions) {
      const out = await generate(data, greedy, generateOptions);
      for (let row = 0; row < data.input_lengths.length; row++) yield [row, outputRow(out, row)] as [number, GenerationOutputSpec];
    },
    releaseSamples(sampleIds) {
      oracle.releaseSamples?.(sampleIds);
      learner.releaseSamples?.(sampleIds);
    },
  };
  return { policy, learnerTurns };
}
