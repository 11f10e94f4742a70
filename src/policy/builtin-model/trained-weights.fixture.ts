/** A small trained-preset architecture and seeded weights for it, shared by the weights-file and trained-model tests. */

import { VOCAB_SIZE } from "../../core/tokenizer/byte-level.js";
import { trainedPreset, type TrainedArchitecture } from "./presets.js";
import { generateWeights, SplitMix32, type ModelWeights } from "./weights.js";

export const SMALL_ARCHITECTURE: TrainedArchitecture = {
  vocabSize: VOCAB_SIZE,
  hiddenSize: 32,
  intermediateSize: 64,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 8,
  ropeTheta: 10000,
  rmsNormEps: 1e-6,
  maxPositionEmbeddings: 512,
  tieWordEmbeddings: false,
};

/** Seeded weights with norms away from 1, so a norm mixed up with another shows. */
export function sampleWeights(a: TrainedArchitecture, seed = 1): ModelWeights {
  const w = generateWeights(trainedPreset(a), seed);
  const rng = new SplitMix32(seed + 1);
  const jitter = (v: Float32Array) => v.map(() => 0.5 + rng.next());
  w.norm = jitter(w.norm);
  for (const l of w.layers) {
    l.inputLayernorm = jitter(l.inputLayernorm);
    l.postAttentionLayernorm = jitter(l.postAttentionLayernorm);
  }
  return w;
}
