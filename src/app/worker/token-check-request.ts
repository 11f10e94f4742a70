/**
 * The rollout worker's side of `check_tokens`: the token consistency check (src/scenario/token-check.ts) of one
 * sample with the loaded model's own tokenizer and chat template (rendered as Python renders it,
 * src/policy/llm/hf-chat-template.ts; `encode` without special tokens, `decode` with nothing skipped), as the CLI
 * checks with the same model's files.
 */

import { checkTokenizerOf, type TransformersTokenizerLike } from "../../policy/llm/check-tokenizer.js";
import { checkSample, type CheckSample, type CheckTokenizer } from "../../scenario/token-check.js";
import type { TokenCheckAnswer } from "./protocol.js";

/** The adapter of each tokenizer instance (building one reads its config; a run's samples reuse it). */
const adapters = new WeakMap<object, CheckTokenizer>();

export function answerTokenCheck(sample: CheckSample, model: string, loaded: { model: string; tokenizer: TransformersTokenizerLike } | null): TokenCheckAnswer {
  if (!loaded || loaded.model !== model) return { kind: "not_loaded", loaded: loaded?.model ?? null };
  let tokenizer = adapters.get(loaded.tokenizer);
  if (!tokenizer) {
    tokenizer = checkTokenizerOf(loaded.tokenizer, model);
    adapters.set(loaded.tokenizer, tokenizer);
  }
  return { kind: "checked", result: checkSample(sample, tokenizer), tokenizer: model };
}
