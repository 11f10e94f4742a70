/**
 * The tokenizer files of the model folder (browser-inference.md §6.2–§6.3): a byte-level BPE with no merges whose
 * ids are exactly the project's `ByteLevelTokenizer` ids (0–255 bytes, 256–264 the nine markers), or, for a trained
 * model with merges of its own (`merges.ts`), the same ids and one more token per merge.
 */

import { ADDED_TOKENS } from "../../core/tokenizer/byte-level.js";
import { CHAT_TEMPLATE } from "./chat-template-jinja.js";
import { bytesToUnicode, FIRST_MERGED_ID, PRE_TOKENIZER_PATTERN, type Merge } from "./merges.js";

const EOS_TOKEN = "<|im_end|>";
const PAD_TOKEN = "<|endoftext|>";
const ADDITIONAL_SPECIAL_TOKENS = ["<|im_start|>", "<|im_end|>"];

export { bytesToUnicode };

const addedTokenFlags = { single_word: false, lstrip: false, rstrip: false, normalized: false };

const byteLevelPreTokenizer = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true };

/** With merges, text is cut by `PRE_TOKENIZER_PATTERN` first (merges never cross a cut), then mapped to bytes. */
const mergingPreTokenizer = {
  type: "Sequence",
  pretokenizers: [
    { type: "Split", pattern: { Regex: PRE_TOKENIZER_PATTERN }, behavior: "Isolated", invert: false },
    { ...byteLevelPreTokenizer, use_regex: false },
  ],
};

export function tokenizerJson(merges: readonly Merge[] = []): object {
  const vocab: Record<string, number> = {};
  bytesToUnicode().forEach((ch, byte) => (vocab[ch] = byte));
  merges.forEach(([left, right], i) => (vocab[left + right] = FIRST_MERGED_ID + i));
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: ADDED_TOKENS.map((t) => ({ id: t.id, content: t.content, ...addedTokenFlags, special: t.special })),
    normalizer: null,
    pre_tokenizer: merges.length > 0 ? mergingPreTokenizer : byteLevelPreTokenizer,
    post_processor: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: true },
    decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: "",
      end_of_word_suffix: "",
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: merges.map(([left, right]) => `${left} ${right}`),
    },
  };
}

export function tokenizerConfigJson(): object {
  const added_tokens_decoder: Record<string, object> = {};
  for (const t of ADDED_TOKENS) {
    added_tokens_decoder[String(t.id)] = {
      content: t.content,
      lstrip: false,
      normalized: false,
      rstrip: false,
      single_word: false,
      special: t.special,
    };
  }
  return {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder,
    additional_special_tokens: ADDITIONAL_SPECIAL_TOKENS,
    bos_token: null,
    chat_template: CHAT_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: EOS_TOKEN,
    errors: "replace",
    model_max_length: 4096,
    pad_token: PAD_TOKEN,
    split_special_tokens: false,
    tokenizer_class: "Qwen2Tokenizer",
    unk_token: null,
  };
}

const addedTokenObject = (content: string) => ({
  content,
  lstrip: false,
  normalized: false,
  rstrip: false,
  single_word: false,
});

export function specialTokensMapJson(): object {
  return {
    additional_special_tokens: ADDITIONAL_SPECIAL_TOKENS.map(addedTokenObject),
    eos_token: addedTokenObject(EOS_TOKEN),
    pad_token: addedTokenObject(PAD_TOKEN),
  };
}
