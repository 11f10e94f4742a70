/**
 * `config.json` and `generation_config.json` (browser-inference.md §4.2, §6.2).
 *
 * Stop token: only `<|im_end|>` (258). `<|endoftext|>` (256) is the pad token and is never emitted (the logit
 * shaping blocks it), so listing it as a second EOS would change nothing; one id keeps `eos_token_id` a plain number
 * that every caller can compare against. The same holds for `tiny-qwen3` with Qwen3's ids (`<|im_end|>` 151645,
 * `<|endoftext|>` 151643, also its bos as in Qwen3's own config).
 */

import { EOS_TOKEN_ID, PAD_TOKEN_ID } from "../../core/tokenizer/byte-level.js";
import type { ModelPreset } from "./presets.js";

/** The special ids of the vocabulary: the byte-level one's by default; `tiny-qwen3` passes Qwen3's. */
export interface SpecialIds {
  bos: number;
  eos: number;
  pad: number;
}

const BYTE_LEVEL_IDS: SpecialIds = { bos: PAD_TOKEN_ID, eos: EOS_TOKEN_ID, pad: PAD_TOKEN_ID };

/**
 * `model_type` llama for every preset: the graph is a Llama decoder (no per-head q/k norms), so calling the Qwen3
 * preset `qwen3` would misdescribe it; only its vocabulary is Qwen3's.
 */
export function configJson(p: ModelPreset, ids: SpecialIds = BYTE_LEVEL_IDS): object {
  return {
    architectures: ["LlamaForCausalLM"],
    model_type: "llama",
    vocab_size: p.vocabSize,
    hidden_size: p.hiddenSize,
    intermediate_size: p.intermediateSize,
    num_hidden_layers: p.numLayers,
    num_attention_heads: p.numHeads,
    num_key_value_heads: p.numKvHeads,
    head_dim: p.headDim,
    hidden_act: "silu",
    max_position_embeddings: p.maxPositionEmbeddings,
    rms_norm_eps: p.rmsNormEps,
    rope_theta: p.ropeTheta,
    rope_scaling: null,
    attention_bias: false,
    attention_dropout: 0,
    mlp_bias: false,
    tie_word_embeddings: p.tieWordEmbeddings ?? false,
    bos_token_id: ids.bos,
    eos_token_id: ids.eos,
    pad_token_id: ids.pad,
    torch_dtype: "float32",
    use_cache: true,
    // fp32 lets the folder load on the browser's default wasm device, which would otherwise ask for a q8 file.
    "transformers.js_config": { dtype: "fp32", use_external_data_format: false },
  };
}

export function generationConfigJson(ids: SpecialIds = BYTE_LEVEL_IDS): object {
  return {
    bos_token_id: ids.bos,
    eos_token_id: ids.eos,
    pad_token_id: ids.pad,
    do_sample: false,
    max_new_tokens: 256,
  };
}
