/**
 * Input files are UTF-8, and bytes that are not UTF-8 are an error naming the byte (a lenient decode would turn them
 * into U+FFFD without a word, and a scenario would silently run with other text than its file's). Files are read as
 * bytes and decoded here with a fatal `TextDecoder`; only when it fails does our own scanner find where.
 */

import { LabError } from "../core/index.js";

/**
 * The offset of the lead byte of the first sequence in `bytes[start, end)` that is not UTF-8 (a stray continuation
 * byte, an overlong form, a surrogate, a code point above U+10FFFF, a character cut short by `end`), or -1.
 */
export function invalidUtf8Offset(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let i = start;
  while (i < end) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0; // overlong
      else if (b === 0xed) hi = 0x9f; // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90; // overlong
      else if (b === 0xf4) hi = 0x8f; // above U+10FFFF
    } else return i;
    if (i + need >= end) return i; // cut short by the end
    const second = bytes[i + 1]!;
    if (second < lo || second > hi) return i;
    for (let k = 2; k <= need; k++) {
      const c = bytes[i + k]!;
      if (c < 0x80 || c > 0xbf) return i;
    }
    i += need + 1;
  }
  return -1;
}

/** Bytes that are not UTF-8: where (0-based byte offset, 1-based line). */
export class Utf8Error extends LabError {
  override name = "Utf8Error";
  override readonly code = "invalid_utf8";
  constructor(
    readonly offset: number,
    readonly line: number,
  ) {
    super(`not valid UTF-8 at byte ${offset} (line ${line}): the file must be UTF-8 text`);
  }
}

/** 1-based line of byte `offset` (newlines before it, plus one). */
export function lineOfByte(bytes: Uint8Array, offset: number, start = 0): number {
  let line = 1;
  for (let k = bytes.indexOf(0x0a, start); k !== -1 && k < offset; k = bytes.indexOf(0x0a, k + 1)) line++;
  return line;
}

/** `bytes` as text; throws `Utf8Error` at the first byte that is not UTF-8. A byte-order mark is dropped. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (e) {
    const offset = invalidUtf8Offset(bytes);
    if (offset < 0) throw e;
    throw new Utf8Error(offset, lineOfByte(bytes, offset));
  }
}

/** Text as given, or bytes decoded as UTF-8 (`Utf8Error` when they are not). */
export const textOf = (input: string | Uint8Array): string => (typeof input === "string" ? input : decodeUtf8(input));

/** Where a complete character ends: `bytes.length`, or the start of a character the end cuts short. */
function completeEnd(bytes: Uint8Array): number {
  const n = bytes.length;
  // A character is at most 4 bytes: its lead byte is among the last 3 when it is incomplete.
  for (let k = n - 1; k >= 0 && k >= n - 3; k--) {
    const b = bytes[k]!;
    if (b < 0x80) return n; // ASCII: whatever came before it is complete (or invalid, for the decoder to say)
    if (b >= 0xc0) {
      const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return k + length > n ? k : n;
    }
  }
  return n;
}

/**
 * A streaming UTF-8 decoder for line-based files (JSONL) that does not replace bytes silently: each chunk is decoded
 * with a fatal `TextDecoder` (a character cut by the chunk's end waits for the next chunk); at bytes that are not
 * UTF-8 it reports their offset in the stream (`onInvalid`) and skips to the line's end (a newline byte is never part
 * of a character), handing on U+FFFD in their place, so the reader can fail that line and go on with the next.
 * A byte-order mark at the start is dropped.
 */
export class StrictUtf8Decoder {
  private readonly decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  private carry: Uint8Array | null = null;
  /** Stream offset of the first byte not handed to `decode` yet (the carry's start). */
  private offset = 0;
  private started = false;
  /** Skipping the rest of a line that had bytes that are not UTF-8. */
  private skipping = false;

  constructor(
    private readonly onText: (text: string) => void,
    private readonly onInvalid: (byteOffset: number) => void,
  ) {}

  decode(chunk: Uint8Array): void {
    let bytes = chunk;
    if (this.carry) {
      bytes = new Uint8Array(this.carry.length + chunk.length);
      bytes.set(this.carry);
      bytes.set(chunk, this.carry.length);
      this.carry = null;
    }
    const base = this.offset;
    let pos = 0;
    if (!this.started) {
      // Up to three bytes decide whether the stream starts with a byte-order mark.
      const bom = [0xef, 0xbb, 0xbf];
      const prefix = Math.min(3, bytes.length);
      let isPrefix = true;
      for (let k = 0; k < prefix; k++) if (bytes[k] !== bom[k]) isPrefix = false;
      if (isPrefix && bytes.length < 3) {
        this.carry = bytes;
        return;
      }
      this.started = true;
      if (isPrefix) pos = 3;
    }
    const end = completeEnd(bytes);
    if (end < bytes.length) this.carry = bytes.slice(end);
    this.offset = base + end;
    this.run(bytes, pos, end, base);
  }

  /** The stream ended: a character it cut short is bytes that are not UTF-8. */
  end(): void {
    const carry = this.carry;
    this.carry = null;
    if (!carry) return;
    if (!this.started) {
      this.started = true;
      this.run(carry, 0, carry.length, this.offset); // one or two bytes of what might have been a mark
      return;
    }
    if (!this.skipping) {
      this.onInvalid(this.offset);
      this.onText("\ufffd");
    }
  }

  private run(bytes: Uint8Array, pos: number, end: number, base: number): void {
    while (pos < end) {
      if (this.skipping) {
        const nl = bytes.indexOf(0x0a, pos);
        if (nl === -1 || nl >= end) return;
        this.skipping = false;
        pos = nl;
      }
      try {
        this.onText(this.decoder.decode(bytes.subarray(pos, end)));
        return;
      } catch (e) {
        const bad = invalidUtf8Offset(bytes, pos, end);
        if (bad < 0) throw e;
        if (bad > pos) this.onText(this.decoder.decode(bytes.subarray(pos, bad)));
        this.onInvalid(base + bad);
        this.onText("\ufffd");
        this.skipping = true;
        pos = bad + 1;
      }
    }
  }
}
