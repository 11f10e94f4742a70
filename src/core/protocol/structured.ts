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
}

/**
 * The "template" envelope: what the built-in ChatML template renders between the end of the assistant's content
 * and the start of its next content, less what the assistant already generated (hermes-and-thinking.md §1.6).
 */
export function templateToolResponseEnvelope(content: string, ctx: TemplateEnvelopeContext): string {
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
