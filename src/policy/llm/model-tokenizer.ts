/** A model's transformers.js tokenizer behind the core's `TokenizerInterface`. */

import type * as Transformers from "@huggingface/transformers";
import type { TokenizerInterface } from "../../core/index.js";
import { renderTokenizerChatTemplate, type ChatTemplateOptions } from "./hf-chat-template.js";

type HfTokenizer = Transformers.PreTrainedTokenizer;

/** The model's tokenizer as the core sees it: encode without special tokens, decode with or without them. */
export class ModelTokenizer implements TokenizerInterface {
  readonly padTokenId: number;
  readonly eosTokenId: number;
  /**
   * The tokens that end a generation: the tokenizer's EOS and the model's generation config's (`eos_token_id`, one
   * id or a list: Qwen3's lists `<|im_end|>` and `<|endoftext|>`), as Hugging Face's `generate()` and vLLM stop at
   * each of them.
   */
  readonly endTokenIds: ReadonlySet<number>;
  readonly generationPrefill: string;

  /** `generationEos`: the model's generation config's `eos_token_id` (absent for a tokenizer alone). */
  constructor(
    readonly hf: HfTokenizer,
    generationEos: number | readonly number[] | null | undefined = null,
  ) {
    const eos = hf.eos_token_id ?? hf.encode(hf.eos_token ?? "", { add_special_tokens: false })[0];
    if (eos === undefined) throw new Error("the model's tokenizer has no EOS token");
    this.eosTokenId = Number(eos);
    const configured = generationEos === null || generationEos === undefined ? [] : typeof generationEos === "number" ? [generationEos] : generationEos;
    this.endTokenIds = new Set([this.eosTokenId, ...configured.filter((id) => Number.isInteger(id) && id >= 0)]);
    this.padTokenId = Number(hf.pad_token_id ?? this.eosTokenId);
    this.generationPrefill = detectGenerationPrefill(hf);
  }

  encode(text: string): number[] {
    return this.hf.encode(text, { add_special_tokens: false });
  }

  private readonly tokenTexts = new Map<number, string>();

  /** One token's text (nothing skipped), memoized: streaming asks for it once per generated token. */
  tokenText(id: number): string {
    let text = this.tokenTexts.get(id);
    if (text === undefined) {
      text = this.decode([id]);
      this.tokenTexts.set(id, text);
    }
    return text;
  }

  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    if (ids.length === 0) return ""; // transformers.js rejects an empty list
    return this.hf.decode([...ids], { skip_special_tokens: options.skipSpecialTokens ?? false });
  }

  /** The tokenizer's own chat template (its `tokenizer_config.json`'s), rendered as Hugging Face's Python renders it. */
  applyChatTemplate(messages: readonly { role: string; content: string }[], options: ChatTemplateOptions): string {
    return renderTokenizerChatTemplate(this.hf, messages, options);
  }
}

/** What the chat template's generation prompt adds after `<|im_start|>assistant\n` (e.g. `<think>\n`). */
function detectGenerationPrefill(hf: HfTokenizer): string {
  try {
    const chat = [{ role: "user", content: "x" }];
    const withPrompt = renderTokenizerChatTemplate(hf, chat, { addGenerationPrompt: true });
    const without = renderTokenizerChatTemplate(hf, chat, { addGenerationPrompt: false });
    const prompt = withPrompt.startsWith(without) ? withPrompt.slice(without.length) : "";
    const header = "<|im_start|>assistant\n";
    return prompt.startsWith(header) ? prompt.slice(header.length) : "";
  } catch {
    return "";
  }
}
