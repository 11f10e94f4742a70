/**
 * Learns byte-pair merges (`policy/builtin-model/merges.ts`) from the lab's own text: the classic BPE trainer
 * (Sennrich et al.; what Hugging Face's `BpeTrainer` does without its extras). Texts are cut at the markers (added
 * tokens are never merged) and into pieces by the tokenizer's own `preTokenize`; each piece's bytes, in the
 * byte-to-unicode alphabet, are its first symbols; then, `count` times, the most frequent adjacent pair (ties: the
 * smaller pair, by code units) becomes one symbol everywhere. No library here trains a BPE (transformers.js only
 * applies one), and it is small.
 */

import { ADDED_TOKENS } from "../core/tokenizer/byte-level.js";
import { bytesToUnicode, preTokenize, type Merge } from "../policy/builtin-model/merges.js";

const MARKERS = new RegExp(ADDED_TOKENS.map((t) => t.content.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");

interface Word {
  symbols: string[];
  count: number;
}

const pairKey = (a: string, b: string) => `${a}\u0000${b}`;

/** `count` merges (fewer when no pair is left that occurs twice), from `texts` weighted by how often each is given. */
export function learnMerges(texts: Iterable<string>, count: number): Merge[] {
  const byteChars = bytesToUnicode();
  const encoder = new TextEncoder();
  const pieceCounts = new Map<string, number>();
  for (const text of texts) {
    for (const segment of text.split(MARKERS)) {
      for (const piece of preTokenize(segment)) pieceCounts.set(piece, (pieceCounts.get(piece) ?? 0) + 1);
    }
  }
  const words: Word[] = [...pieceCounts].map(([piece, n]) => ({ symbols: [...encoder.encode(piece)].map((b) => byteChars[b]!), count: n }));

  // Pair counts, and which words hold each pair, kept up to date as merges change the words that hold them.
  const pairCounts = new Map<string, number>();
  const holders = new Map<string, Set<number>>();
  const addPairs = (w: number, sign: 1 | -1) => {
    const { symbols, count: n } = words[w]!;
    for (let i = 0; i + 1 < symbols.length; i++) {
      const key = pairKey(symbols[i]!, symbols[i + 1]!);
      pairCounts.set(key, (pairCounts.get(key) ?? 0) + sign * n);
      if (sign > 0) {
        let set = holders.get(key);
        if (!set) holders.set(key, (set = new Set()));
        set.add(w);
      }
    }
  };
  words.forEach((_, w) => addPairs(w, 1));

  const merges: Merge[] = [];
  while (merges.length < count) {
    let best: string | null = null;
    let bestCount = 1; // a pair seen once teaches nothing
    for (const [key, n] of pairCounts) {
      if (n > bestCount || (n === bestCount && best !== null && key < best)) {
        best = key;
        bestCount = n;
      }
    }
    if (best === null) break;
    const [left, right] = best.split("\u0000") as [string, string];
    merges.push([left, right]);
    for (const w of holders.get(best) ?? []) {
      const word = words[w]!;
      addPairs(w, -1);
      const merged: string[] = [];
      for (let i = 0; i < word.symbols.length; i++) {
        if (i + 1 < word.symbols.length && word.symbols[i] === left && word.symbols[i + 1] === right) {
          merged.push(left + right);
          i++;
        } else merged.push(word.symbols[i]!);
      }
      word.symbols = merged;
      addPairs(w, 1);
    }
    pairCounts.delete(best);
    holders.delete(best);
    for (const [key, n] of pairCounts) if (n <= 0) pairCounts.delete(key);
  }
  return merges;
}
