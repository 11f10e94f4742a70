/**
 * The built-in byte-level tokenizer (scenario-format.md; browser-inference.md §6.3).
 *
 * Ids 0–255 are the UTF-8 bytes; ids 256–264 are the nine added markers, each one atomic token. The ids match the
 * built-in model's `tokenizer.json`, so the scripted, oracle and model policies share one token space.
 */

import type { TokenId, TokenIds, TokenizerInterface } from "../types.js";

export interface AddedToken {
  id: number;
  content: string;
  special: boolean;
}

export const ADDED_TOKENS: readonly AddedToken[] = [
  { id: 256, content: "<|endoftext|>", special: true },
  { id: 257, content: "<|im_start|>", special: true },
  { id: 258, content: "<|im_end|>", special: true },
  { id: 259, content: "<tool_call>", special: false },
  { id: 260, content: "</tool_call>", special: false },
  { id: 261, content: "<think>", special: false },
  { id: 262, content: "</think>", special: false },
  { id: 263, content: "<tool_response>", special: false },
  { id: 264, content: "</tool_response>", special: false },
];

export const PAD_TOKEN_ID = 256;
export const EOS_TOKEN_ID = 258;
export const VOCAB_SIZE = 265;

export interface ByteLevelOptions {
  /** Added markers flagged special (dropped by a skipping decode). Defaults to the three ChatML control tokens. */
  specialMarkers?: readonly string[];
}

const encoder = new TextEncoder();
/** The most ids `encode`'s scratch array keeps between calls (a prompt's worth; longer texts get a fresh one). */
const MAX_KEPT_SCRATCH = 1 << 16;
// Hugging Face decoders replace bytes of a cut UTF-8 character with U+FFFD; TextDecoder's default does the same.
const decoder = new TextDecoder("utf-8", { fatal: false });

export class ByteLevelTokenizer implements TokenizerInterface {
  readonly padTokenId = PAD_TOKEN_ID;
  readonly eosTokenId = EOS_TOKEN_ID;
  private readonly markerById = new Map<number, AddedToken>();
  private readonly markerByText = new Map(ADDED_TOKENS.map((t) => [t.content, t.id]));
  /**
   * The ids of the text being encoded, written into one kept array and copied out at their exact length: an encode
   * then allocates one array rather than growing one push by push (encode is synchronous, so one array serves).
   */
  private readonly scratch: number[] = [];
  private written = 0;
  private readonly markerPattern: RegExp;

  constructor(options: ByteLevelOptions = {}) {
    const special = new Set(options.specialMarkers ?? ADDED_TOKENS.filter((t) => t.special).map((t) => t.content));
    for (const token of ADDED_TOKENS) this.markerById.set(token.id, { ...token, special: special.has(token.content) });
    const alternatives = [...ADDED_TOKENS]
      .sort((a, b) => b.content.length - a.content.length)
      .map((t) => t.content.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    this.markerPattern = new RegExp(alternatives.join("|"), "y");
  }

  encode(text: string): TokenId[] {
    this.written = 0;
    let last = 0;
    // Every marker starts with "<": the pattern is tried (longest first) only there, from left to right.
    for (let at = text.indexOf("<"); at >= 0; at = text.indexOf("<", at + 1)) {
      this.markerPattern.lastIndex = at;
      const found = this.markerPattern.exec(text)?.[0];
      if (found === undefined) continue;
      this.putBytes(text, last, at);
      this.put(this.markerByText.get(found)!);
      last = at + found.length;
      at = last - 1;
    }
    this.putBytes(text, last, text.length);
    const ids = this.scratch.slice(0, this.written);
    // A very long text's room is not kept for ever by the shared tokenizer.
    if (this.scratch.length > MAX_KEPT_SCRATCH) this.scratch.length = 0;
    return ids;
  }

  /** The UTF-8 bytes of `text[from:to]`: ASCII directly, the rest (from its first non-ASCII unit on) by the encoder. */
  private putBytes(text: string, from: number, to: number): void {
    for (let i = from; i < to; i++) {
      const unit = text.charCodeAt(i);
      if (unit >= 0x80) {
        for (const byte of encoder.encode(text.slice(i, to))) this.put(byte);
        return;
      }
      this.put(unit);
    }
  }

  private put(id: number): void {
    if (this.written < this.scratch.length) this.scratch[this.written] = id;
    else this.scratch.push(id);
    this.written++;
  }

  decode(ids: TokenIds, options: { skipSpecialTokens?: boolean } = {}): string {
    const skip = options.skipSpecialTokens ?? false;
    let out = "";
    // Runs of byte ids go into one buffer (as large as the ids after the run's start) and are decoded at once.
    let bytes: Uint8Array | null = null;
    let pending = 0;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (id >= 0 && id < 256) {
        (bytes ??= new Uint8Array(ids.length - i))[pending++] = id;
        continue;
      }
      const marker = this.markerById.get(id);
      if (!marker) throw new RangeError(`token id ${id} is outside the byte-level vocabulary (0–${VOCAB_SIZE - 1})`);
      // A skipped special token is not there at all: the bytes on either side join (one character cut by it is whole).
      if (skip && marker.special) continue;
      if (pending) out += decoder.decode(bytes!.subarray(0, pending));
      pending = 0;
      out += marker.content;
    }
    if (pending) out += decoder.decode(bytes!.subarray(0, pending));
    return out;
  }

  /** The text of one token, with markers spelled out and a lone byte shown as itself (for token views). */
  tokenText(id: number): string {
    const marker = this.markerById.get(id);
    if (marker) return marker.content;
    return id < 128 ? String.fromCharCode(id) : `<0x${id.toString(16).toUpperCase().padStart(2, "0")}>`;
  }

  isSpecial(id: number): boolean {
    return this.markerById.get(id)?.special ?? false;
  }
}

/** The project's one shared instance for policies that need no model. */
export const byteLevelTokenizer = new ByteLevelTokenizer();
