/** The append mode's cache buffers (decode-engine.ts): grown with each row's positions in place, one step written in. */

import { describe, expect, it } from "vitest";
import { assembleBatch, growCapacity, writePosition, type CacheLayout } from "./kv-cache.js";

const layout: CacheLayout = { names: ["past_key_values.0.key"], type: "float32", heads: [2], dims: [3] };
/** Element `[b, h, s, d]` of a `[B, 2, seq, 3]` tensor, as a number that names it. */
const tag = (b: number, h: number, s: number, d: number) => 1000 * b + 100 * h + 10 * s + d + 1;
function tensor(batch: number, seq: number, filled: number): Float32Array {
  const out = new Float32Array(batch * 2 * seq * 3);
  for (let b = 0; b < batch; b++) for (let h = 0; h < 2; h++) for (let s = 0; s < filled; s++) for (let d = 0; d < 3; d++) out[((b * 2 + h) * seq + s) * 3 + d] = tag(b, h, s, d);
  return out;
}

describe("append-mode cache buffers", () => {
  it("grow: every row's used positions stay where they were, the new room is zeros", () => {
    const [grown] = growCapacity(layout, [tensor(2, 4, 3)], 2, 4, 3, 6);
    expect(grown).toEqual(tensor(2, 6, 3));
  });

  it("refuse a capacity smaller than what is used", () => {
    expect(() => growCapacity(layout, [tensor(1, 4, 4)], 1, 4, 4, 3)).toThrow(RangeError);
  });

  it("write one step's keys into the same position of every row", () => {
    const buffer = tensor(2, 6, 3);
    const fresh = new Float32Array(2 * 2 * 1 * 3).map((_, i) => -(i + 1));
    writePosition(layout, [buffer], 6, [fresh], 2, 3);
    for (let b = 0; b < 2; b++)
      for (let h = 0; h < 2; h++) {
        expect(Array.from(buffer.subarray(((b * 2 + h) * 6 + 3) * 3, ((b * 2 + h) * 6 + 4) * 3))).toEqual(Array.from(fresh.subarray((b * 2 + h) * 3, (b * 2 + h + 1) * 3)));
        // The positions before it are untouched, the ones after it still zero.
        expect(buffer[((b * 2 + h) * 6 + 2) * 3]).toBe(tag(b, h, 2, 0));
        expect(buffer[((b * 2 + h) * 6 + 4) * 3]).toBe(0);
      }
  });

  it("assemble rows left-padded to the longest plus the headroom, with room after them", () => {
    // Row 0 holds 3 positions, row 1 holds 2 (of a 4-position tensor): headroom 2, room 3.
    const views = [
      { data: [tensor(1, 3, 3)], row: 0, seq: 3, start: 0, length: 3 },
      { data: [tensor(1, 4, 2)], row: 0, seq: 4, start: 0, length: 2 },
    ];
    const { data, seq, cap, pads } = assembleBatch(layout, views, { headroom: 2, room: 3 });
    expect({ seq, cap, pads }).toEqual({ seq: 5, cap: 8, pads: [2, 3] });
    const [out] = data;
    const at = (b: number, h: number, s: number) => out![((b * 2 + h) * cap + s) * 3];
    for (let h = 0; h < 2; h++) {
      expect([0, 1, 2, 3, 4, 5, 6, 7].map((s) => at(0, h, s))).toEqual([0, 0, tag(0, h, 0, 0), tag(0, h, 1, 0), tag(0, h, 2, 0), 0, 0, 0]);
      expect([0, 1, 2, 3, 4, 5, 6, 7].map((s) => at(1, h, s))).toEqual([0, 0, 0, tag(0, h, 0, 0), tag(0, h, 1, 0), 0, 0, 0]);
    }
  });
});
