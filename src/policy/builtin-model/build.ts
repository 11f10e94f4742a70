/**
 * Builds the whole model folder in memory, as `relative path → contents`, with no I/O: the Node CLI writes it to
 * disk, and a page could serve it through `env.fetch` or OPFS.
 */

import { BUILDER_VERSION, encodeDecoderModel } from "./decoder-graph.js";
import { configJson, generationConfigJson } from "./model-config.js";
import { PRESETS, type ModelPreset, type PresetName } from "./presets.js";
import { specialTokensMapJson, tokenizerConfigJson, tokenizerJson } from "./tokenizer-files.js";
import { generateWeights } from "./weights.js";

export type ModelFiles = Map<string, Uint8Array | string>;

/** Written last, and removed first when rebuilding, so its presence means the folder is complete. */
export const STAMP_FILE = "rollout-lab.json";

/** The folder's files in write order (the stamp last). */
export const MODEL_FILE_PATHS = [
  "config.json",
  "generation_config.json",
  "tokenizer.json",
  "tokenizer_config.json",
  "special_tokens_map.json",
  "onnx/model.onnx",
  STAMP_FILE,
] as const;

/** The hub-style id transformers.js loads a built-in preset by (`env.localModelPath` + `builtin/<preset>`). */
export const builtinModelId = (preset: PresetName) => `builtin/${preset}`;

export function checkSeed(seed: number): number {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`seed must be an integer in [0, 2^32): ${seed}`);
  return seed;
}

const json = (value: object) => `${JSON.stringify(value, null, 2)}\n`;

/** What identifies a build: equal stamps mean byte-identical files. */
export function modelStamp(preset: PresetName, seed: number): string {
  return json({
    builder: "rollout-lab builtin-model",
    version: BUILDER_VERSION,
    preset,
    seed: checkSeed(seed),
    // The sizes and logit-shaping biases, so retuning a preset rebuilds its folder.
    config: PRESETS[preset],
    files: MODEL_FILE_PATHS.filter((f) => f !== STAMP_FILE),
  });
}

export function buildModelFiles(presetOrName: PresetName | ModelPreset, seed = 0): ModelFiles {
  const preset = typeof presetOrName === "string" ? PRESETS[presetOrName] : presetOrName;
  checkSeed(seed);
  const onnx = encodeDecoderModel(preset, generateWeights(preset, seed));
  const files: ModelFiles = new Map();
  files.set("config.json", json(configJson(preset)));
  files.set("generation_config.json", json(generationConfigJson()));
  files.set("tokenizer.json", json(tokenizerJson()));
  files.set("tokenizer_config.json", json(tokenizerConfigJson()));
  files.set("special_tokens_map.json", json(specialTokensMapJson()));
  files.set("onnx/model.onnx", onnx);
  files.set(STAMP_FILE, modelStamp(preset.name, seed));
  return files;
}
