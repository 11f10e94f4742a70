/**
 * The vocabulary size of a policy's tokenizer, where it can be known: the byte-level one's, or a model tokenizer's
 * (transformers.js's `get_vocab`, added tokens included). The server policy refuses token ids at or above it.
 */

import { byteLevelTokenizer, VOCAB_SIZE, type TokenizerInterface } from "../../core/index.js";
import { ModelTokenizer } from "./model-policy.js";

export function tokenizerVocabSize(tokenizer: TokenizerInterface): number | undefined {
  if (tokenizer === byteLevelTokenizer) return VOCAB_SIZE;
  if (!(tokenizer instanceof ModelTokenizer)) return undefined;
  let largest = -1;
  for (const id of tokenizer.hf.get_vocab().values()) largest = Math.max(largest, id);
  return largest >= 0 ? largest + 1 : undefined;
}
