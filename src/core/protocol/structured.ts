/**
 * The structured tool-use config (fork-additions.md §1): resolution, thinking style, the special-token decode
 * choice with its auto-probe, and the observation envelope in its two modes (decision 8).
 */

import { pyRepr, PyTuple } from "../python/repr.js";
import type { TokenizerInterface } from "../types.js";

export const THINKING_PAIRED = "paired";
export const THINKING_CLOSING_ONLY = "closing_only";
export const THINKING_STYLES = [THINKING_PAIRED, THINKING_CLOSING_ONLY] as const;
export type ThinkingStyle = (typeof THINKING_STYLES)[number];

export type EnvelopeMode = "fork" | "template";

export interface StructuredToolUseConfig {
  enabled?: unknown;
  backend?: string;
  thinking_style?: ThinkingStyle | null;
  decode_skip_special_tokens?: boolean | null;
  constrained_tools?: string[];
  /** The lab's addition (decision 8): the derived library's exact envelope, or the chat template's. */
  envelope?: EnvelopeMode;
  [key: string]: unknown;
}

/** `resolve_structured_tool_use`: null when absent or disabled; the same object, checked, when enabled. */
export function resolveStructuredToolUse(block: unknown): StructuredToolUseConfig | null {
  if (!block || (typeof block === "object" && Object.keys(block).length === 0)) return null;
  const cfg = block as StructuredToolUseConfig;
  if (!pyTruthy(cfg.enabled ?? false)) return null;
  const style = Object.hasOwn(cfg, "thinking_style") ? cfg.thinking_style : THINKING_PAIRED;
  if (!THINKING_STYLES.includes(style as ThinkingStyle)) {
    throw new Error(
      `structured_tool_use.thinking_style must be one of ${pyRepr(new PyTuple(THINKING_STYLES))}, got ${pyRepr(style)}`,
    );
  }
  const backend = Object.hasOwn(cfg, "backend") ? cfg.backend : "vllm";
  if (backend !== "vllm") throw new Error(`structured_tool_use v1 supports only the 'vllm' backend, got ${pyRepr(backend)}`);
  return cfg;
}

export function pyTruthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (value && typeof value === "object") return Object.keys(value).length > 0;
  return Boolean(value);
}

export function structuredThinkingStyle(cfg: StructuredToolUseConfig | null | undefined): ThinkingStyle {
  return (cfg?.thinking_style ?? THINKING_PAIRED) as ThinkingStyle;
}

const probeCache = new WeakMap<object, boolean>();

/** Whether `<tool_call>` and `</tool_call>` survive a decode that skips special tokens (memoized per tokenizer). */
export function toolTagsSurviveSkipSpecial(tokenizer: TokenizerInterface): boolean {
  const cached = probeCache.get(tokenizer);
  if (cached !== undefined) return cached;
  let survives = true;
  try {
    for (const tag of ["<tool_call>", "</tool_call>"]) {
      if (!tokenizer.decode(tokenizer.encode(tag), { skipSpecialTokens: true }).includes(tag)) {
        survives = false;
        break;
      }
    }
  } catch {
    survives = false;
  }
  probeCache.set(tokenizer, survives);
  return survives;
}

/** `skip_special_tokens` for decoding assistant turns. */
export function structuredDecodeSkipSpecial(
  cfg: StructuredToolUseConfig | null | undefined,
  tokenizer: TokenizerInterface,
): boolean {
  if (cfg === null || cfg === undefined) return true;
  const explicit = cfg.decode_skip_special_tokens;
  if (explicit !== null && explicit !== undefined) return Boolean(explicit);
  return toolTagsSurviveSkipSpecial(tokenizer);
}

export const TOOL_RESPONSE_ENVELOPE_PREFIX = "<|im_start|>user\n<tool_response>\n";
export const TOOL_RESPONSE_ENVELOPE_SUFFIX = "\n</tool_response><|im_end|>\n<|im_start|>assistant\n";
const IM_END = "<|im_end|>";

export function wrapToolResponseEnvelope(content: string): string {
  return TOOL_RESPONSE_ENVELOPE_PREFIX + content + TOOL_RESPONSE_ENVELOPE_SUFFIX;
}

export interface TemplateEnvelopeContext {
  /** Decoded text (nothing skipped) of the assistant turn just generated. */
  assistantText: string;
  /** What the template's generation prompt adds after `<|im_start|>assistant\n` (e.g. `<think>\n`), if anything. */
  generationPrefill?: string | undefined;
  /** The tokenizer's real chat template, when it has one: the envelope is then what it renders (below). */
  tokenizer?: Pick<TokenizerInterface, "applyChatTemplate" | "decode" | "eosTokenId"> | undefined;
}

/** Stands for the observation in the rendering the real template's envelope is cut from (no template writes it). */
const OBSERVATION_SENTINEL = "\u0000observation\u0000";

/**
 * The "template" envelope with a tokenizer's real chat template: the template renders a conversation of one user
 * turn, the assistant's turn (its text, less a final end-of-turn token) and the observation as a `tool` message,
 * with the generation prompt; the envelope is what that rendering writes after the assistant's text, with the
 * observation in its place, up to the end (the next generation prompt, its prefill included). When the template
 * writes the assistant's text as it was generated, the cut is right after that text; otherwise (the template
 * rewrote the turn: a think block re-spaced) right before the last end-of-turn token in front of the observation.
 * An end-of-turn token the assistant generated is not repeated.
 */
export function realTemplateToolResponseEnvelope(
  content: string,
  assistantText: string,
  tokenizer: Pick<TokenizerInterface, "applyChatTemplate" | "decode" | "eosTokenId">,
): string {
  const apply = tokenizer.applyChatTemplate!.bind(tokenizer);
  const eos = tokenizer.decode([tokenizer.eosTokenId]);
  const endsWithEos = eos !== "" && assistantText.endsWith(eos);
  const turnText = endsWithEos ? assistantText.slice(0, -eos.length) : assistantText;
  const user = { role: "user", content: "x" };
  const prompt = apply([user], { addGenerationPrompt: true });
  const rendered = apply(
    [user, { role: "assistant", content: turnText }, { role: "tool", content: OBSERVATION_SENTINEL }],
    { addGenerationPrompt: true },
  );
  const at = rendered.indexOf(OBSERVATION_SENTINEL);
  if (at < 0) throw new Error("the chat template does not render a tool message's content");
  const before = rendered.slice(0, at);
  const after = rendered.slice(at + OBSERVATION_SENTINEL.length);
  let between: string;
  if (before.startsWith(prompt + turnText)) {
    between = before.slice(prompt.length + turnText.length);
  } else {
    const close = eos ? before.lastIndexOf(eos) : -1;
    if (close < 0) throw new Error("the chat template rewrites the assistant's turn and closes it with no end-of-turn token");
    between = before.slice(close);
  }
  if (endsWithEos && between.startsWith(eos)) between = between.slice(eos.length);
  return between + content + after;
}

/**
 * The "template" envelope: what the chat template renders between the end of the assistant's content
 * and the start of its next content, less what the assistant already generated (hermes-and-thinking.md §1.6): the tokenizer's real template where it
 * has one, else the built-in ChatML template's text.
 */
export function templateToolResponseEnvelope(content: string, ctx: TemplateEnvelopeContext): string {
  if (ctx.tokenizer?.applyChatTemplate) return realTemplateToolResponseEnvelope(content, ctx.assistantText, ctx.tokenizer);
  const closing = ctx.assistantText.endsWith(IM_END) ? "" : IM_END;
  return `${closing}\n<|im_start|>user\n<tool_response>\n${content}\n</tool_response><|im_end|>\n<|im_start|>assistant\n${ctx.generationPrefill ?? ""}`;
}

/** The text an observation is tokenized from: raw when structured is off, else the configured envelope. */
export function observationText(
  content: string,
  cfg: StructuredToolUseConfig | null | undefined,
  ctx: TemplateEnvelopeContext,
): string {
  if (cfg === null || cfg === undefined) return content;
  return cfg.envelope === "template" ? templateToolResponseEnvelope(content, ctx) : wrapToolResponseEnvelope(content);
}
