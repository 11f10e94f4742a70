/**
 * Browser-safe: the token consistency check's tokenizer (src/scenario/token-check.ts `CheckTokenizer`) over a loaded
 * transformers.js tokenizer, as the rollout worker holds one (./worker.ts). No import of transformers.js: the
 * tokenizer is typed by what is used of it, so any realm's instance fits. The same calls as the Node loader's
 * (./tokenizer-load.ts), the template rendered by ./hf-chat-template.ts, so the page's check and the CLI's agree.
 */

import { renderTokenizerChatTemplate, type ChatTemplateTokenizer } from "./hf-chat-template.js";

/** What the check uses of a transformers.js `PreTrainedTokenizer`. */
export interface TransformersTokenizerLike extends ChatTemplateTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): number[];
  decode(ids: number[], options: { skip_special_tokens: boolean }): string;
  chat_template?: unknown;
  eos_token?: unknown;
}

/** The check's tokenizer shape (structurally src/scenario/token-check.ts `CheckTokenizer`, which policy may not import). */
export interface ModelCheckTokenizer {
  encode(text: string): number[];
  decode(ids: readonly number[]): string;
  tokenText(id: number): string;
  applyChatTemplate(messages: readonly { role: string; content: string }[], options: { tools?: readonly unknown[] | null; addGenerationPrompt: boolean }): string;
  eosText: string;
}

/** The adapter; throws when the tokenizer has no chat template or names no end-of-turn token (nothing to check with). */
export function checkTokenizerOf(tokenizer: TransformersTokenizerLike, name: string): ModelCheckTokenizer {
  if (!tokenizer.chat_template) throw new Error(`the tokenizer of '${name}' has no chat_template: the check renders the conversation with it`);
  const eosText = tokenizer.eos_token;
  if (typeof eosText !== "string") throw new Error(`the tokenizer of '${name}' names no eos_token`);
  return {
    encode: (text) => tokenizer.encode(text, { add_special_tokens: false }),
    // transformers.js refuses an empty list; a message with no tokens (a turn cut to nothing) is empty text.
    decode: (ids) => (ids.length === 0 ? "" : tokenizer.decode([...ids], { skip_special_tokens: false })),
    tokenText: (id) => tokenizer.decode([id], { skip_special_tokens: false }),
    applyChatTemplate: (messages, options) => renderTokenizerChatTemplate(tokenizer, messages, options),
    eosText,
  };
}
