/**
 * A trained model's own byte-pair merges on top of the byte-level vocabulary: ids 0–255 are the bytes, 256–264 the
 * nine markers, and merge *i* makes the token `265 + i` (its two parts joined). Tokens are spelled in GPT-2's
 * byte-to-unicode alphabet (`bytesToUnicode`), as tokenizer.json's `vocab` and `merges` spell them. With no merges
 * this is exactly the byte-level vocabulary. The merges travel in the weights file's metadata (`vocabulary`), so a
 * weights file says which tokenizer its ids belong to.
 */

import { VOCAB_SIZE } from "../../core/tokenizer/byte-level.js";

export type Merge = readonly [string, string];

/** The first id a merge makes (after the bytes and the markers). */
export const FIRST_MERGED_ID = VOCAB_SIZE;

/**
 * How text is cut into pieces before merging (a tokenizer.json `Split` pre-tokenizer, then byte-level): Qwen2's
 * pattern without its case-insensitive group, so every digit is a piece of its own (numbers are copied digit by
 * digit, as the calculator needs) and a word keeps one leading non-letter (` write`, `_file`). Merges never cross
 * a piece's edge, so the trainer (`src/training/vocabulary.ts`) must cut exactly as the tokenizer does: both use this.
 */
export const PRE_TOKENIZER_PATTERN =
  "'(?:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** The pieces a text is cut into before merging (the same as transformers.js's `Split` with this pattern). */
export function preTokenize(text: string): string[] {
  return text.match(new RegExp(PRE_TOKENIZER_PATTERN, "gu")) ?? [];
}

/** GPT-2's `bytes_to_unicode`: printable Latin-1 bytes map to themselves, the other bytes to U+0100 onwards, in byte order. */
export function bytesToUnicode(): string[] {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = [];
  let next = 256;
  for (let b = 0; b < 256; b++) out.push(String.fromCodePoint(printable(b) ? b : next++));
  return out;
}

export class MergesError extends Error {
  override name = "MergesError";
}

/**
 * The bytes of each token a merge makes (index *i*: token `265 + i`), checking that every part is a byte or an
 * earlier merge's token and that no token is made twice. `where` names the merges in errors.
 */
export function mergedTokenBytes(merges: readonly Merge[], where: string): Uint8Array[] {
  const bytesOf = new Map<string, Uint8Array>(bytesToUnicode().map((ch, byte) => [ch, Uint8Array.of(byte)]));
  const out: Uint8Array[] = [];
  merges.forEach(([left, right], i) => {
    const a = bytesOf.get(left);
    const b = bytesOf.get(right);
    if (!a || !b) throw new MergesError(`${where}[${i}]: ${JSON.stringify(a ? right : left)} is neither a byte nor an earlier merge's token`);
    const joined = left + right;
    if (bytesOf.has(joined)) throw new MergesError(`${where}[${i}]: ${JSON.stringify(joined)} is already a token`);
    const bytes = new Uint8Array(a.length + b.length);
    bytes.set(a);
    bytes.set(b, a.length);
    bytesOf.set(joined, bytes);
    out.push(bytes);
  });
  return out;
}

/** Merges from JSON (`[["a", "b"], …]`), checked; `where` names them in errors. */
export function parseMerges(value: unknown, where: string): Merge[] {
  if (!Array.isArray(value)) throw new MergesError(`${where}: expected a list of [left, right] pairs`);
  const merges = value.map((pair, i): Merge => {
    if (!Array.isArray(pair) || pair.length !== 2 || pair.some((p) => typeof p !== "string" || p === "")) {
      throw new MergesError(`${where}[${i}]: expected a pair of non-empty strings, got ${JSON.stringify(pair)}`);
    }
    return [pair[0] as string, pair[1] as string];
  });
  mergedTokenBytes(merges, where);
  return merges;
}
