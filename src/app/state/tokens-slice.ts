/** The token texts slice: a model run's token texts in its model's own vocabulary, asked of the worker as needed. */

import type { SliceSet } from "./slice.js";

export interface TokenText {
  text: string;
  special: boolean;
}

export interface TokensSlice {
  /** Replaced (a new map) whenever texts arrive, so a selector of it sees the change. */
  texts: ReadonlyMap<number, TokenText>;
  request(ids: number[]): void;
  /** Texts the worker sent. */
  add(ids: number[], texts: string[], special: boolean[]): void;
  /** A new run's model has a vocabulary of its own. */
  clear(): void;
}

export function createTokensSlice(set: SliceSet<TokensSlice>, get: () => TokensSlice, describe: (ids: number[]) => void): TokensSlice {
  return {
    texts: new Map(),
    request(ids) {
      const known = get().texts;
      const missing = [...new Set(ids)].filter((id) => !known.has(id));
      if (missing.length) describe(missing);
    },
    add(ids, texts, special) {
      const next = new Map(get().texts);
      ids.forEach((id, i) => next.set(id, { text: texts[i]!, special: special[i]! }));
      set({ texts: next });
    },
    clear: () => set({ texts: new Map() }),
  };
}
