import { describe, expect, it } from "vitest";
import type { RunModel } from "../run/run-model.js";
import { createSelectionSlice, moveAmong, type SelectionSlice } from "./selection-slice.js";

function slice(samples: number) {
  let state!: SelectionSlice;
  const model = { samples: Array.from({ length: samples }, () => ({ turns: [{}, {}] })) } as unknown as RunModel;
  state = createSelectionSlice(
    (changes) => (state = { ...state, ...(typeof changes === "function" ? changes(state) : changes) }),
    () => state,
    () => model,
  );
  return { get: () => state };
}

describe("moveAmong", () => {
  it("moves by rows among the shown ones, clamped at the ends", () => {
    expect(moveAmong([1, 4, 7], 4, 1)).toBe(7);
    expect(moveAmong([1, 4, 7], 4, -1)).toBe(1);
    expect(moveAmong([1, 4, 7], 7, 1)).toBe(7);
    expect(moveAmong([], 4, 1)).toBeNull();
  });
  it("from a sample not shown, steps onto the nearest shown row in the move's direction", () => {
    expect(moveAmong([1, 4, 7], 5, 1)).toBe(7);
    expect(moveAmong([1, 4, 7], 5, -1)).toBe(4);
    expect(moveAmong([1, 4, 7], 0, -1)).toBe(1);
    expect(moveAmong([1, 4, 7], 9, 1)).toBe(7);
  });
});

describe("moveSelection with a filter on", () => {
  it("j/k move within the shown rows; turns move as before; off again, every sample", () => {
    const s = slice(10);
    s.get().setShownRows([2, 5, 8]);
    s.get().moveSelection(1, 0);
    expect(s.get().selected).toBe(2);
    s.get().moveSelection(1, 0);
    expect(s.get().selected).toBe(5);
    s.get().moveSelection(0, 1);
    expect(s.get()).toMatchObject({ selected: 5, selectedTurn: 0 });
    s.get().moveSelection(-1, 0);
    expect(s.get()).toMatchObject({ selected: 2, selectedTurn: 0 });
    s.get().setShownRows(null);
    s.get().moveSelection(1, 0);
    expect(s.get().selected).toBe(3);
  });
  it("no shown rows: the selection stays", () => {
    const s = slice(3);
    s.get().select(1);
    s.get().setShownRows([]);
    s.get().moveSelection(1, 0);
    expect(s.get().selected).toBe(1);
  });
});
