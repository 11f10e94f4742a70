/** The selection slice: the sample and turn the views look at in the run shown (the session sets it on a show). */

import type { RunModel } from "../run/run-model.js";
import type { Selection } from "../session/run-session.js";
import type { SliceSet } from "./slice.js";

export interface SelectionSlice extends Selection {
  /** The samples the batch overview shows while a filter is on, in order (null: every sample). */
  shownRows: readonly number[] | null;
  select(sample: number, turn?: number | null): void;
  /** Moves by `dSample` samples (among the shown rows while a filter is on) or `dTurn` turns, within the run shown. */
  moveSelection(dSample: number, dTurn: number): void;
  setShownRows(rows: readonly number[] | null): void;
}

/**
 * The sample `dSample` rows from `selected` among `rows` (in order); from a sample not among them, the first row
 * past it in that direction counts as one step. Null when there is no row to go to.
 */
export function moveAmong(rows: readonly number[], selected: number, dSample: number): number | null {
  if (rows.length === 0) return null;
  let at = rows.indexOf(selected);
  if (at === -1) {
    // Not shown: step onto the nearest shown row in the direction of the move.
    const after = rows.findIndex((r) => r > selected);
    at = dSample > 0 ? (after === -1 ? rows.length - 1 : after) : after === -1 ? rows.length - 1 : Math.max(0, after - 1);
    dSample -= Math.sign(dSample);
  }
  return rows[Math.min(rows.length - 1, Math.max(0, at + dSample))]!;
}

export function createSelectionSlice(set: SliceSet<SelectionSlice>, get: () => SelectionSlice, shownModel: () => RunModel | null): SelectionSlice {
  return {
    selected: 0,
    selectedTurn: null,
    shownRows: null,
    select: (selected, turn = null) => set({ selected, selectedTurn: turn }),
    moveSelection(dSample, dTurn) {
      const model = shownModel();
      const { selected, selectedTurn, shownRows } = get();
      if (!model || model.samples.length === 0) return;
      let sample = Math.min(model.samples.length - 1, Math.max(0, selected + dSample));
      if (dSample !== 0 && shownRows) {
        const to = moveAmong(shownRows.filter((r) => r < model.samples.length), selected, dSample);
        if (to === null) return;
        sample = to;
      }
      const turns = model.samples[sample]!.turns.length;
      let turn = dSample !== 0 ? selectedTurn : (selectedTurn ?? -1) + dTurn;
      if (turn !== null) turn = turns === 0 ? null : Math.min(turns - 1, Math.max(0, turn));
      set({ selected: sample, selectedTurn: turn });
    },
    setShownRows: (shownRows) => set({ shownRows }),
  };
}
