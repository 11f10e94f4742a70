/**
 * The `trained` preset's folder: the byte-level presets' files (config, tokenizer, chat template, graph) around the
 * weights of a weights file (`weights-file.ts`) instead of seeded ones, plus a README that says where they came
 * from. In memory and browser-safe like `build.ts`; the Node writer is `writeTrainedModel` in `write-folder.ts`.
 */

import { byteLevelModelFiles, json, MODEL_FILE_PATHS, STAMP_FILE, type ModelFiles } from "./build.js";
import { BUILDER_VERSION, encodeDecoderModel } from "./decoder-graph.js";
import { parameterCount, trainedPreset, type ModelPreset } from "./presets.js";
import { parseWeightsFile } from "./weights-file.js";

/** The trained folder's files in write order (the stamp last). */
export const TRAINED_MODEL_FILE_PATHS = [...MODEL_FILE_PATHS.filter((f) => f !== STAMP_FILE), "README.md", STAMP_FILE] as const;

/** Where the weights file came from, as the stamp records it: equal stamps mean byte-identical folders. */
export interface WeightsSource {
  /** The file's SHA-256, hex (the caller hashes: `node:crypto` in Node, `crypto.subtle` in a page). */
  sha256: string;
  /** How the README and errors name the file (a path relative to the project). */
  name: string;
}

export function trainedModelStamp(preset: ModelPreset, source: WeightsSource): string {
  return json({
    builder: "rollout-lab builtin-model",
    version: BUILDER_VERSION,
    preset: preset.name,
    weights: source,
    config: preset,
    files: TRAINED_MODEL_FILE_PATHS.filter((f) => f !== STAMP_FILE),
  });
}

/**
 * Builds the folder from a weights file's bytes. Its architecture comes from the file (checked: byte-level
 * vocabulary, every tensor's name, shape and finite values); the logit shaping only blocks the ids the byte-level
 * presets never emit (no EOS or marker bias).
 */
export function buildTrainedModelFiles(weightsFile: Uint8Array, source: WeightsSource): ModelFiles {
  const { architecture, weights, merges, metadata } = parseWeightsFile(weightsFile, source.name);
  const preset = trainedPreset(architecture, merges);
  const files = byteLevelModelFiles(preset, encodeDecoderModel(preset, weights));
  files.set("README.md", trainedReadme(preset, source, metadata.training));
  files.set(STAMP_FILE, trainedModelStamp(preset, source));
  return files;
}

function trainedReadme(p: ModelPreset, source: WeightsSource, training: string | undefined): string {
  return `# builtin:trained — trained weights

A Llama-style decoder on the lab's byte-level vocabulary${p.merges ? ` and ${p.merges.length} byte-pair merges of its own (tokenizer.json)` : ""}, with the weights of \`${source.name}\`
(SHA-256 ${source.sha256}), trained by \`npm run train:model\` on the lab's own oracle rollouts (docs/training.md).

- Architecture: hidden ${p.hiddenSize}, ${p.numLayers} layers, ${p.numHeads} heads (${p.numKvHeads} KV heads, head_dim
  ${p.headDim}), intermediate ${p.intermediateSize}, embeddings ${p.tieWordEmbeddings ? "tied" : "untied"};
  ${parameterCount(p).toLocaleString("en-US")} parameters.
- Logit shaping: none but blocking (−1e4) the ids outside printable ASCII, \`\\n\` and the five markers the byte-level
  models emit (and the merged tokens of other bytes); no EOS or marker bias.
- Training (the weights file's metadata): ${training ?? "not recorded"}
`;
}
