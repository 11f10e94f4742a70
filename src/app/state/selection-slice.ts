/** The selection slice: the sample and turn the views look at in the run shown (the session sets it on a show). */

import type { RunModel } from "../run/run-model.js";
import type { Selection } from "../session/run-session.js";
import type { SliceSet } from "./slice.js";

export interface SelectionSlice extends Selection {
  select(sample: number, turn?: number | null): void;
  /** Moves by `dSample` samples or `dTurn` turns, within the run shown. */
  moveSelection(dSample: number, dTurn: number): void;
}

export function createSelectionSlice(set: SliceSet<SelectionSlice>, get: () => SelectionSlice, shownModel: () => RunModel | null): SelectionSlice {
  return {
    selected: 0,
    selectedTurn: null,
    select: (selected, turn = null) => set({ selected, selectedTurn: turn }),
    moveSelection(dSample, dTurn) {
      const model = shownModel();
      const { selected, selectedTurn } = get();
      if (!model || model.samples.length === 0) return;
      const sample = Math.min(model.samples.length - 1, Math.max(0, selected + dSample));
      const turns = model.samples[sample]!.turns.length;
      let turn = dSample !== 0 ? selectedTurn : (selectedTurn ?? -1) + dTurn;
      if (turn !== null) turn = turns === 0 ? null : Math.min(turns - 1, Math.max(0, turn));
      set({ selected: sample, selectedTurn: turn });
    },
  };
}
