/** The view slice: which tab of the sample panel is open. */

import type { SliceSet } from "./slice.js";

export type Tab = "transcript" | "tokens" | "environment" | "compare";

export interface ViewSlice {
  tab: Tab;
  setTab(tab: Tab): void;
}

export const createViewSlice = (set: SliceSet<ViewSlice>): ViewSlice => ({
  tab: "transcript",
  setTab: (tab) => set({ tab }),
});
