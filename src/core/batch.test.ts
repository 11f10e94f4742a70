import { describe, expect, it } from "vitest";
import { BatchedDataDict } from "./batch.js";

describe("BatchedDataDict", () => {
  const batch = () => new BatchedDataDict({ idx: [0, 1, 2], log: [[{ a: 1 }], [{ a: 2 }], [{ a: 3 }]] });

  it("selects indices as independent copies", () => {
    const source = batch();
    const picked = source.selectIndices([2, 0]);
    expect(picked.get("idx")).toEqual([2, 0]);
    (picked.get("log")[0] as { a: number }[])[0]!.a = 99;
    expect((source.get("log")[2] as { a: number }[])[0]!.a).toBe(3);
  });

  it("repeat-interleaves into contiguous groups of independent copies", () => {
    const repeated = batch().repeatInterleave(2);
    expect(repeated.get("idx")).toEqual([0, 0, 1, 1, 2, 2]);
    expect(repeated.get("log")[0]).not.toBe(repeated.get("log")[1]);
    expect(repeated.size).toBe(6);
  });

  it("slices and concatenates with the sorted union of keys", () => {
    const merged = BatchedDataDict.fromBatches([batch().slice(0, 1), batch().slice(2, 3)]);
    expect(merged.keys()).toEqual(["idx", "log"]);
    expect(merged.get("idx")).toEqual([0, 2]);
    expect(() => BatchedDataDict.fromBatches([batch(), new BatchedDataDict({ idx: [5] })])).toThrow("batch is missing key 'log'");
  });

  it("converts to and from rows", () => {
    const rows = batch().rows();
    expect(rows[1]).toEqual({ idx: 1, log: [{ a: 2 }] });
    expect(BatchedDataDict.fromRows(rows).get("idx")).toEqual([0, 1, 2]);
    expect(() => batch().get("nope")).toThrow("batch has no key 'nope'");
  });
});
