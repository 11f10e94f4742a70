/**
 * Sizes of the built-in Llama-style decoder (browser-inference.md §6.1). Both presets share the byte-level vocabulary
 * of `core/tokenizer/byte-level.ts`, so the model speaks the project's token ids.
 */

import { VOCAB_SIZE } from "../../core/tokenizer/byte-level.js";

export interface ModelPreset {
  name: PresetName;
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  ropeTheta: number;
  rmsNormEps: number;
  maxPositionEmbeddings: number;
  /** Logit-shaping bias (nats) of `<|im_end|>`, and of the four tool/think markers (`logit-shaping.ts`). */
  eosBias: number;
  markerBias: number;
}

export type PresetName = "tiny" | "small";

const common = { vocabSize: VOCAB_SIZE, ropeTheta: 10000, rmsNormEps: 1e-6, maxPositionEmbeddings: 4096 };

export const PRESETS: Readonly<Record<PresetName, ModelPreset>> = {
  tiny: {
    ...common,
    name: "tiny",
    hiddenSize: 64,
    intermediateSize: 128,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 16,
    eosBias: 2.5,
    markerBias: 0.5,
  },
  small: {
    ...common,
    name: "small",
    hiddenSize: 384,
    intermediateSize: 2560,
    numLayers: 6,
    numHeads: 6,
    numKvHeads: 2,
    headDim: 64,
    // Its logits reach <|im_end|> more easily: +2.5 would end most replies after 1–4 tokens (seed 0).
    eosBias: 1,
    markerBias: 0.5,
  },
};

export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

export function isPresetName(name: string): name is PresetName {
  return Object.hasOwn(PRESETS, name);
}

/** Trainable parameters (norm weights included; the RoPE constants and the logit-shaping bias are not). */
export function parameterCount(p: ModelPreset): number {
  const attention = p.hiddenSize * p.headDim * (2 * p.numHeads + 2 * p.numKvHeads);
  const mlp = 3 * p.hiddenSize * p.intermediateSize;
  const perLayer = attention + mlp + 2 * p.hiddenSize;
  return 2 * p.vocabSize * p.hiddenSize + p.numLayers * perLayer + p.hiddenSize;
}
