/**
 * The built-in Llama-style decoder: seeded weights, ONNX graph, tokenizer and chat-template files, built in memory
 * (browser-safe). The Node writer lives in `./write-folder.js`.
 */

export {
  buildModelFiles,
  builtinModelId,
  checkSeed,
  MODEL_FILE_PATHS,
  modelFilePaths,
  modelStamp,
  QWEN3_MODEL_FILE_PATHS,
  STAMP_FILE,
  type ModelFiles,
} from "./build.js";
export { CHAT_TEMPLATE } from "./chat-template-jinja.js";
export { BUILDER_VERSION, encodeDecoderModel } from "./decoder-graph.js";
export { allowedTokenIds, BLOCKED_BIAS, isAllowedByte, EMITTED_MARKERS, shapingBias } from "./logit-shaping.js";
export { configJson, generationConfigJson } from "./model-config.js";
export {
  BUILTIN_MODEL_NAMES,
  BYTE_LEVEL_SPECS,
  isBuiltinModelName,
  isPresetName,
  isSeededPreset,
  parameterCount,
  PRESET_NAMES,
  PRESETS,
  TRAINED_PRESET,
  trainedPreset,
  type BuiltinModelName,
  type ModelPreset,
  type PresetName,
  type TrainedArchitecture,
  type TrainedPresetName,
} from "./presets.js";
export {
  parseQwen3Vocabulary,
  QWEN3_EMITTED_MARKERS,
  QWEN3_TOKENIZER_PACKAGE,
  qwen3AllowedTokenIds,
  qwen3ShapingBias,
  type Qwen3Vocabulary,
  type VocabularyFiles,
} from "./qwen3-vocabulary.js";
export { referenceForward, type ReferenceInput } from "./reference.js";
export { bytesToUnicode, specialTokensMapJson, tokenizerConfigJson, tokenizerJson } from "./tokenizer-files.js";
export { generateWeights, SplitMix32, type ModelWeights } from "./weights.js";
export { buildTrainedModelFiles, TRAINED_MODEL_FILE_PATHS, trainedModelStamp, type WeightsSource } from "./trained-model.js";
export { encodeWeightsFile, parseWeightsFile, WEIGHTS_FORMAT, WeightsFileError, type WeightsFile } from "./weights-file.js";
