/**
 * The token texts slice: a run's token texts in its own vocabulary (a model policy's model, or a text policy's
 * `tokenizer`), asked of the worker as needed. The texts are one vocabulary's: asking in another starts afresh.
 */

import type { SliceSet } from "./slice.js";

export interface TokenText {
  text: string;
  special: boolean;
}

export interface TokensSlice {
  /** The vocabulary `texts` are in (null: none asked yet). */
  vocabulary: string | null;
  /** Replaced (a new map) whenever texts arrive, so a selector of it sees the change. */
  texts: ReadonlyMap<number, TokenText>;
  /** Asks for the texts of `ids` in `vocabulary` that are not known yet. */
  request(ids: number[], vocabulary: string): void;
  /** Texts the worker sent (dropped when they are of a vocabulary no longer asked for). */
  add(vocabulary: string, ids: number[], texts: string[], special: boolean[]): void;
  /** A new run may load another tokenizer under the same name (a picked folder). */
  clear(): void;
}

export function createTokensSlice(
  set: SliceSet<TokensSlice>,
  get: () => TokensSlice,
  describe: (ids: number[], vocabulary: string) => void,
): TokensSlice {
  return {
    vocabulary: null,
    texts: new Map(),
    request(ids, vocabulary) {
      if (get().vocabulary !== vocabulary) set({ vocabulary, texts: new Map() });
      const known = get().texts;
      const missing = [...new Set(ids)].filter((id) => !known.has(id));
      if (missing.length) describe(missing, vocabulary);
    },
    add(vocabulary, ids, texts, special) {
      if (get().vocabulary !== vocabulary) return;
      const next = new Map(get().texts);
      ids.forEach((id, i) => next.set(id, { text: texts[i]!, special: special[i]! }));
      set({ texts: next });
    },
    clear: () => set({ vocabulary: null, texts: new Map() }),
  };
}
