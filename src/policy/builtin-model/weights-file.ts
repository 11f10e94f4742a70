/**
 * The trained weights' file: safetensors (an 8-byte little-endian header length, a JSON header, the raw tensors),
 * so PyTorch writes it with the standard library and any safetensors reader opens it. Tensors carry Hugging Face
 * Llama's names and PyTorch's `[out, in]` layout; `ModelWeights` holds linear weights as ONNX MatMul operands
 * (`[in, out]`), so both directions transpose. The header's `__metadata__` holds `format`, the architecture as
 * `config` (a JSON string with config.json's keys), `vocabulary` when the model has byte-pair merges of its own
 * (`{"merges": [[left, right], …]}`, `merges.ts`; absent: the byte-level vocabulary) and whatever else the writer
 * adds (the training's provenance), all strings as safetensors requires.
 *
 * | tensor | shape | `ModelWeights` |
 * | --- | --- | --- |
 * | `model.embed_tokens.weight` | [V, hidden] | `embedTokens` (with tied embeddings also `lmHead`, transposed) |
 * | `model.layers.{l}.input_layernorm.weight` | [hidden] | `layers[l].inputLayernorm` |
 * | `model.layers.{l}.self_attn.{q,k,v,o}_proj.weight` | [H·D, hidden], [KV·D, hidden] ×2, [hidden, H·D] | `qProj` … `oProj` |
 * | `model.layers.{l}.post_attention_layernorm.weight` | [hidden] | `postAttentionLayernorm` |
 * | `model.layers.{l}.mlp.{gate,up,down}_proj.weight` | [m, hidden] ×2, [hidden, m] | `gateProj`, `upProj`, `downProj` |
 * | `model.norm.weight` | [hidden] | `norm` |
 * | `lm_head.weight` (untied only) | [V, hidden] | `lmHead` |
 */

import { LabError } from "../../core/index.js";
import { VOCAB_SIZE } from "../../core/tokenizer/byte-level.js";
import { MergesError, parseMerges, type Merge } from "./merges.js";
import type { TrainedArchitecture } from "./presets.js";
import type { LayerWeights, ModelWeights } from "./weights.js";

export const WEIGHTS_FORMAT = "rollout-lab-llama-weights/1";

export class WeightsFileError extends LabError {
  override name = "WeightsFileError";
  override readonly code = "invalid_weights_file";
}

export interface WeightsFile {
  architecture: TrainedArchitecture;
  weights: ModelWeights;
  /** The model's byte-pair merges (`__metadata__.vocabulary`); none: the byte-level vocabulary. */
  merges: Merge[];
  /** The header's `__metadata__` as written (`format`, `config`, the writer's own keys). */
  metadata: Record<string, string>;
}

/** The merges of `__metadata__.vocabulary` (a JSON string `{"merges": …}`), checked; none when it is absent. */
export function parseVocabularyMetadata(text: string | undefined, where: string): Merge[] {
  if (text === undefined) return [];
  const field = `${where}: __metadata__.vocabulary`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new WeightsFileError(`${field} is not JSON: ${(e as Error).message}`);
  }
  if (typeof value !== "object" || value === null || !("merges" in value)) throw new WeightsFileError(`${field}: expected an object with "merges"`);
  try {
    return parseMerges((value as { merges: unknown }).merges, `${field}.merges`);
  } catch (e) {
    if (e instanceof MergesError) throw new WeightsFileError(e.message);
    throw e;
  }
}

/** The `vocabulary` metadata string of a model's merges. */
export function vocabularyMetadata(merges: readonly Merge[]): string {
  return JSON.stringify({ merges });
}

/** config.json's key for each architecture field (the `config` metadata uses these). */
const CONFIG_KEYS = {
  vocabSize: "vocab_size",
  hiddenSize: "hidden_size",
  intermediateSize: "intermediate_size",
  numLayers: "num_hidden_layers",
  numHeads: "num_attention_heads",
  numKvHeads: "num_key_value_heads",
  headDim: "head_dim",
  ropeTheta: "rope_theta",
  rmsNormEps: "rms_norm_eps",
  maxPositionEmbeddings: "max_position_embeddings",
  tieWordEmbeddings: "tie_word_embeddings",
} as const satisfies Record<keyof TrainedArchitecture, string>;


/** One tensor the file must hold: its name, its PyTorch shape, and where it goes. */
interface TensorSlot {
  name: string;
  shape: [number] | [number, number];
  put(weights: ModelWeights, values: Float32Array): void;
  take(weights: ModelWeights): Float32Array;
}

/** A tensor stored in the same layout in both (norm weights; the untied embedding). */
const asIs = (name: string, shape: TensorSlot["shape"], get: (w: ModelWeights) => Float32Array, set: (w: ModelWeights, v: Float32Array) => void): TensorSlot => ({
  name,
  shape,
  put: set,
  take: get,
});

/** A PyTorch `[out, in]` matrix stored as `[in, out]`. */
const linear = (name: string, out: number, inner: number, get: (w: ModelWeights) => Float32Array, set: (w: ModelWeights, v: Float32Array) => void): TensorSlot => ({
  name,
  shape: [out, inner],
  put: (w, v) => set(w, transpose(v, out, inner)),
  take: (w) => transpose(get(w), inner, out),
});

/** `[rows, cols]` row-major → `[cols, rows]`. */
function transpose(values: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(values.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = values[r * cols + c]!;
  return out;
}

/** Every tensor of an architecture, in the order the writer lays them out. */
function tensorSlots(a: TrainedArchitecture): TensorSlot[] {
  const { vocabSize: V, hiddenSize: h, intermediateSize: m, headDim: D } = a;
  const q = a.numHeads * D;
  const kv = a.numKvHeads * D;
  const slots: TensorSlot[] = [
    // Row t is token t's embedding either way; tied, it is also the LM head's column t (`[hidden, V]`).
    a.tieWordEmbeddings
      ? linear("model.embed_tokens.weight", V, h, (w) => w.lmHead, (w, v) => (w.lmHead = v))
      : asIs("model.embed_tokens.weight", [V, h], (w) => w.embedTokens!, (w, v) => (w.embedTokens = v)),
  ];
  for (let l = 0; l < a.numLayers; l++) {
    const at = `model.layers.${l}`;
    const layer = (field: keyof LayerWeights) => [(w: ModelWeights) => w.layers[l]![field], (w: ModelWeights, v: Float32Array) => (w.layers[l]![field] = v)] as const;
    slots.push(
      asIs(`${at}.input_layernorm.weight`, [h], ...layer("inputLayernorm")),
      linear(`${at}.self_attn.q_proj.weight`, q, h, ...layer("qProj")),
      linear(`${at}.self_attn.k_proj.weight`, kv, h, ...layer("kProj")),
      linear(`${at}.self_attn.v_proj.weight`, kv, h, ...layer("vProj")),
      linear(`${at}.self_attn.o_proj.weight`, h, q, ...layer("oProj")),
      asIs(`${at}.post_attention_layernorm.weight`, [h], ...layer("postAttentionLayernorm")),
      linear(`${at}.mlp.gate_proj.weight`, m, h, ...layer("gateProj")),
      linear(`${at}.mlp.up_proj.weight`, m, h, ...layer("upProj")),
      linear(`${at}.mlp.down_proj.weight`, h, m, ...layer("downProj")),
    );
  }
  slots.push(asIs("model.norm.weight", [h], (w) => w.norm, (w, v) => (w.norm = v)));
  if (!a.tieWordEmbeddings) slots.push(linear("lm_head.weight", V, h, (w) => w.lmHead, (w, v) => (w.lmHead = v)));
  return slots;
}

const numel = (shape: readonly number[]) => shape.reduce((n, d) => n * d, 1);

/** The architecture a `config` metadata string describes, checked field by field. */
export function parseArchitecture(text: string, where: string, merges = 0): TrainedArchitecture {
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (e) {
    throw new WeightsFileError(`${where}: __metadata__.config is not JSON: ${(e as Error).message}`);
  }
  if (typeof config !== "object" || config === null || Array.isArray(config)) throw new WeightsFileError(`${where}: __metadata__.config must be a JSON object`);
  const record = config as Record<string, unknown>;
  const field = (key: string) => `${where}: __metadata__.config.${key}`;
  const integer = (key: string) => {
    const v = record[key];
    if (!Number.isInteger(v) || (v as number) < 1) throw new WeightsFileError(`${field(key)}: expected a positive integer, got ${JSON.stringify(v)}`);
    return v as number;
  };
  const positive = (key: string) => {
    const v = record[key];
    if (typeof v !== "number" || !(v > 0) || !Number.isFinite(v)) throw new WeightsFileError(`${field(key)}: expected a positive number, got ${JSON.stringify(v)}`);
    return v;
  };
  const tie = record[CONFIG_KEYS.tieWordEmbeddings] ?? false;
  if (typeof tie !== "boolean") throw new WeightsFileError(`${field(CONFIG_KEYS.tieWordEmbeddings)}: expected true or false, got ${JSON.stringify(tie)}`);
  const a: TrainedArchitecture = {
    vocabSize: integer(CONFIG_KEYS.vocabSize),
    hiddenSize: integer(CONFIG_KEYS.hiddenSize),
    intermediateSize: integer(CONFIG_KEYS.intermediateSize),
    numLayers: integer(CONFIG_KEYS.numLayers),
    numHeads: integer(CONFIG_KEYS.numHeads),
    numKvHeads: integer(CONFIG_KEYS.numKvHeads),
    headDim: integer(CONFIG_KEYS.headDim),
    ropeTheta: positive(CONFIG_KEYS.ropeTheta),
    rmsNormEps: positive(CONFIG_KEYS.rmsNormEps),
    maxPositionEmbeddings: integer(CONFIG_KEYS.maxPositionEmbeddings),
    tieWordEmbeddings: tie,
  };
  // A trained preset speaks the byte-level vocabulary and its own merges, one token each (its tokenizer files are built from them).
  const vocabulary = merges > 0 ? `the byte-level vocabulary and ${merges} merges` : "the byte-level vocabulary";
  if (a.vocabSize !== VOCAB_SIZE + merges) throw new WeightsFileError(`${field(CONFIG_KEYS.vocabSize)}: expected ${VOCAB_SIZE + merges} (${vocabulary}), got ${a.vocabSize}`);
  if (a.numHeads % a.numKvHeads !== 0) throw new WeightsFileError(`${field(CONFIG_KEYS.numHeads)}: ${a.numHeads} heads are not a multiple of ${a.numKvHeads} KV heads`);
  if (a.headDim % 2 !== 0) throw new WeightsFileError(`${field(CONFIG_KEYS.headDim)}: RoPE needs an even head_dim, got ${a.headDim}`);
  return a;
}

/** The `config` metadata string of an architecture (config.json's keys). */
export function architectureConfigJson(a: TrainedArchitecture): string {
  return JSON.stringify(Object.fromEntries(Object.entries(CONFIG_KEYS).map(([field, key]) => [key, a[field as keyof TrainedArchitecture] ?? false])));
}

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

/** The file's header: its entries and metadata, and where the tensor bytes start. */
function readHeader(bytes: Uint8Array, where: string): { entries: Map<string, HeaderEntry>; metadata: Record<string, string>; dataStart: number } {
  if (bytes.byteLength < 8) throw new WeightsFileError(`${where}: ${bytes.byteLength} bytes is too short for a safetensors file`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (headerLength > bytes.byteLength - 8) throw new WeightsFileError(`${where}: the header length ${headerLength} runs past the file's ${bytes.byteLength} bytes`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + headerLength)));
  } catch (e) {
    throw new WeightsFileError(`${where}: the header is not UTF-8 JSON: ${(e as Error).message}`);
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) throw new WeightsFileError(`${where}: the header must be a JSON object`);
  const entries = new Map<string, HeaderEntry>();
  let metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(header as Record<string, unknown>)) {
    if (name === "__metadata__") {
      const strings = typeof value === "object" && value !== null && Object.values(value).every((v) => typeof v === "string");
      if (!strings) throw new WeightsFileError(`${where}: __metadata__ must map names to strings`);
      metadata = value as Record<string, string>;
      continue;
    }
    const e = value as Partial<HeaderEntry> | null;
    const offsets = e?.data_offsets;
    const wellFormed =
      typeof e?.dtype === "string" &&
      Array.isArray(e.shape) &&
      e.shape.every((d) => Number.isInteger(d) && d >= 0) &&
      Array.isArray(offsets) &&
      offsets.length === 2 &&
      offsets.every((o) => Number.isInteger(o) && o >= 0);
    if (!wellFormed) throw new WeightsFileError(`${where}: tensor ${name}: expected {dtype, shape, data_offsets}`);
    entries.set(name, e as HeaderEntry);
  }
  return { entries, metadata, dataStart: 8 + headerLength };
}

/**
 * Reads a weights file: the architecture from its metadata, then every tensor that architecture needs (no more, no
 * fewer), each checked for its dtype (F32), shape, byte range and finite values. Errors name the file and tensor.
 */
export function parseWeightsFile(bytes: Uint8Array, where = "weights file"): WeightsFile {
  const { entries, metadata, dataStart } = readHeader(bytes, where);
  if (metadata.format !== WEIGHTS_FORMAT) throw new WeightsFileError(`${where}: __metadata__.format: expected "${WEIGHTS_FORMAT}", got ${JSON.stringify(metadata.format)}`);
  if (metadata.config === undefined) throw new WeightsFileError(`${where}: __metadata__.config (the architecture) is missing`);
  const merges = parseVocabularyMetadata(metadata.vocabulary, where);
  const architecture = parseArchitecture(metadata.config, where, merges.length);
  const slots = tensorSlots(architecture);
  const expected = new Set(slots.map((s) => s.name));
  const stray = [...entries.keys()].filter((name) => !expected.has(name));
  if (stray.length) throw new WeightsFileError(`${where}: tensor ${stray[0]} is not part of this architecture${stray.length > 1 ? ` (nor ${stray.length - 1} more)` : ""}`);

  const dataLength = bytes.byteLength - dataStart;
  const view = new DataView(bytes.buffer, bytes.byteOffset + dataStart, dataLength);
  const weights: ModelWeights = {
    embedTokens: null,
    layers: Array.from({ length: architecture.numLayers }, () => ({}) as LayerWeights),
    norm: new Float32Array(0),
    lmHead: new Float32Array(0),
  };
  for (const slot of slots) {
    const entry = entries.get(slot.name);
    const tensor = `${where}: tensor ${slot.name}`;
    if (!entry) throw new WeightsFileError(`${tensor} is missing`);
    if (entry.dtype !== "F32") throw new WeightsFileError(`${tensor}: dtype ${entry.dtype}, expected F32`);
    if (entry.shape.join(",") !== slot.shape.join(",")) throw new WeightsFileError(`${tensor}: shape [${entry.shape}], expected [${slot.shape}]`);
    const [start, end] = entry.data_offsets;
    const count = numel(slot.shape);
    if (end - start !== 4 * count || end > dataLength) throw new WeightsFileError(`${tensor}: data_offsets [${start}, ${end}] do not hold ${count} float32 values within ${dataLength} bytes of data`);
    const values = new Float32Array(count);
    for (let i = 0; i < count; i++) {
      const v = view.getFloat32(start + 4 * i, true);
      if (!Number.isFinite(v)) throw new WeightsFileError(`${tensor}: value ${i} is ${v} (every weight must be finite)`);
      values[i] = v;
    }
    slot.put(weights, values);
  }
  return { architecture, weights, merges, metadata };
}

/** Writes a weights file (the TypeScript twin of training/weights_file.py; tests and tools use it). */
export function encodeWeightsFile(architecture: TrainedArchitecture, weights: ModelWeights, extraMetadata: Record<string, string> = {}): Uint8Array {
  const slots = tensorSlots(architecture);
  const header: Record<string, unknown> = { __metadata__: { ...extraMetadata, format: WEIGHTS_FORMAT, config: architectureConfigJson(architecture) } };
  let offset = 0;
  for (const slot of slots) {
    const end = offset + 4 * numel(slot.shape);
    header[slot.name] = { dtype: "F32", shape: slot.shape, data_offsets: [offset, end] };
    offset = end;
  }
  // Padded with spaces to 8 bytes, as the safetensors writers do, so the tensors start aligned.
  let headerText = JSON.stringify(header);
  headerText += " ".repeat((8 - ((new TextEncoder().encode(headerText).byteLength) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(headerText);
  const out = new Uint8Array(8 + headerBytes.byteLength + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes.byteLength), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.byteLength;
  for (const slot of slots) {
    for (const v of slot.take(weights)) {
      view.setFloat32(at, v, true);
      at += 4;
    }
  }
  return out;
}
