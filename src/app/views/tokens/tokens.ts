/** Pure helpers of the token view: chip text, log-probability colours, message spans, the template comparison. */

import type { Message } from "../../../core/index.js";
import { tokenCount } from "../../run/compact-messages.js";
import type { SampleView } from "../../run/run-model.js";
import { diffText, type TextDiff } from "./diff.js";

export interface TokenTexts {
  tokenText(id: number): string;
  isSpecial(id: number): boolean;
  /** The tokenizer's own decode (nothing skipped), when it has one: right for multi-byte characters. */
  decode?(ids: readonly number[]): string;
}

/** Messages longer than this start collapsed. */
export const COLLAPSE_OVER = 600;
/** An expanded message draws its chips this many at a time. */
export const CHIP_PAGE = 2000;
/** Log-probabilities at or below this get the scale's far (red) end. */
export const LOGPROB_FLOOR = -6;

const WHITESPACE: Record<string, string> = { "\n": "↵", " ": "·", "\t": "→", "\r": "␍" };

/** A token's text with whitespace and control characters made visible (an empty text shows as `∅`). */
export function visibleText(text: string): string {
  if (text === "") return "∅";
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (WHITESPACE[ch]) out += WHITESPACE[ch];
    else if (code < 0x20) out += String.fromCodePoint(0x2400 + code);
    else if (code === 0x7f) out += "␡";
    else if (code === 0xa0) out += "⍽";
    else out += ch;
  }
  return out;
}

/** 0 for a log-probability of 0 (certain), 1 at or below the floor. */
export function logprobPosition(logprob: number): number {
  if (Number.isNaN(logprob)) return 1;
  return Math.min(1, Math.max(0, logprob / LOGPROB_FLOOR));
}

/** The chip background for a generated token: green near 0, through yellow, to red at the floor. */
export function logprobColor(logprob: number): string {
  const hue = Math.round(120 * (1 - logprobPosition(logprob)));
  return `hsl(${hue} 70% 82%)`;
}

/** The legend's stops: log-probability, its probability and its colour. */
export function legendStops(): { logprob: number; probability: number; color: string }[] {
  return [0, -1, -2, -3, -4, -5, LOGPROB_FLOOR].map((lp) => ({ logprob: lp, probability: Math.exp(lp), color: logprobColor(lp) }));
}

/** A probability in a few digits: fixed above 0.01, in exponent form below. */
export function formatProbability(p: number): string {
  if (p >= 0.01) return p.toFixed(3);
  return p.toExponential(2);
}

/** A chip's tooltip: id, text, and for generated tokens the log-probability and probability. */
export function tokenTitle(id: number, text: string, logprob: number | undefined, special: boolean): string {
  const lines = [`id ${id}${special ? " (special)" : ""}`, `text ${JSON.stringify(text)}`];
  if (logprob !== undefined) lines.push(`logprob ${Number.isFinite(logprob) ? logprob.toFixed(4) : String(logprob)}`, `p ${formatProbability(Math.exp(logprob))}`);
  return lines.join("\n");
}

export type SpanKind = "prompt" | "generated" | "environment";

export interface MessageSpan {
  index: number;
  message: Message;
  kind: SpanKind;
  /** The turn the message belongs to (null for the prompt). */
  turn: number | null;
  /** Where its tokens start in the whole log's token sequence. */
  offset: number;
}

/** The sample's messages with their kind, turn and token offset. */
export function messageSpans(sample: Pick<SampleView, "messages" | "promptMessages" | "turns">): MessageSpan[] {
  const turnOf = new Map<number, number>();
  for (const t of sample.turns) {
    if (!t) continue;
    if (t.assistantIndex !== null) turnOf.set(t.assistantIndex, t.turn);
    if (t.observationIndex !== null) turnOf.set(t.observationIndex, t.turn);
  }
  let offset = 0;
  return sample.messages.map((message, index) => {
    const kind: SpanKind = index < sample.promptMessages ? "prompt" : message.role === "assistant" ? "generated" : "environment";
    const span = { index, message, kind, turn: turnOf.get(index) ?? null, offset };
    offset += tokenCount(message);
    return span;
  });
}

/** What a generated-token scale says about a message: count, mean log-probability, the lowest. */
export function logprobSummary(logprobs: ArrayLike<number> | undefined): { count: number; mean: number; min: number } | null {
  if (!logprobs || logprobs.length === 0) return null;
  let sum = 0;
  let min = Infinity;
  for (let i = 0; i < logprobs.length; i++) {
    const lp = logprobs[i]!;
    sum += lp;
    if (lp < min) min = lp;
  }
  return { count: logprobs.length, mean: sum / logprobs.length, min };
}

const BYTE_TOKEN = /^<0x([0-9A-Fa-f]{2})>$/;

/**
 * The token sequence as text: the tokenizer's decode when it has one, else the tokens' texts joined, with runs of
 * byte tokens (`<0xE2>`) decoded as UTF-8.
 */
export function decodeTokens(ids: readonly number[], tokenizer: TokenTexts): string {
  if (tokenizer.decode) return ids.length ? tokenizer.decode(ids) : "";
  return joinTokenTexts(ids, tokenizer).text;
}

/**
 * The tokens' texts joined (runs of byte tokens decoded as UTF-8), with where each token's text starts in it:
 * `starts[i]` for token i, `starts[ids.length]` the end. A character made of several byte tokens belongs to its last
 * byte (the earlier ones have empty spans).
 */
export function joinTokenTexts(ids: ArrayLike<number>, tokenizer: Pick<TokenTexts, "tokenText">): { text: string; starts: Int32Array } {
  const decoder = new TextDecoder("utf-8", { fatal: false });
  const starts = new Int32Array(ids.length + 1);
  let out = "";
  let inBytes = false;
  const one = new Uint8Array(1);
  for (let i = 0; i < ids.length; i++) {
    const text = tokenizer.tokenText(ids[i]!);
    const byte = BYTE_TOKEN.exec(text);
    if (byte) {
      starts[i] = out.length;
      one[0] = parseInt(byte[1]!, 16);
      // Streamed a byte at a time: what a run decodes to as a whole, each character where its last byte is.
      out += decoder.decode(one, { stream: true });
      inBytes = true;
      continue;
    }
    if (inBytes) out += decoder.decode();
    inBytes = false;
    starts[i] = out.length;
    out += text;
  }
  if (inBytes) out += decoder.decode();
  starts[ids.length] = out.length;
  return { text: out, starts };
}

/** How many chips of a message to draw: none while collapsed, else whole pages. */
export function visibleChipCount(total: number, pages: number): number {
  return Math.min(total, pages * CHIP_PAGE);
}

export interface TemplateComparison {
  template: string;
  decoded: string;
  diff: TextDiff;
}

/**
 * The chat template's rendering of the log (`template`: the token check's reference text, `referenceFor` in
 * src/scenario/token-check.ts) against its token sequence decoded, and their differences.
 */
export function compareWithTemplate(messages: readonly Message[], tokenizer: TokenTexts, template: string): TemplateComparison {
  const decoded = decodeTokens(
    messages.flatMap((m) => m.token_ids),
    tokenizer,
  );
  return { template, decoded, diff: diffText(template, decoded) };
}
