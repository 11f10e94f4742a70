/** The view slice: which tab of the sample panel is open, the tokenizer a run without one is read with, the run search. */

import type { SliceSet } from "./slice.js";

export type Tab = "transcript" | "tokens" | "environment" | "compare";

/**
 * A tokenizer chosen in the page for a run whose scenario names none (an imported dump's token ids): its spec, and
 * the run it was chosen for (another run shown does not inherit it).
 */
export interface RunTokenizer {
  run: object;
  spec: string;
}

export interface ViewSlice {
  tab: Tab;
  setTab(tab: Tab): void;
  runTokenizer: RunTokenizer | null;
  setRunTokenizer(choice: RunTokenizer | null): void;
  /** The run search as typed (../views/SearchBox.tsx): the transcript marks its matches. */
  search: string;
  setSearch(text: string): void;
}

export const createViewSlice = (set: SliceSet<ViewSlice>): ViewSlice => ({
  tab: "transcript",
  setTab: (tab) => set({ tab }),
  runTokenizer: null,
  setRunTokenizer: (runTokenizer) => set({ runTokenizer }),
  search: "",
  setSearch: (search) => set({ search }),
});
