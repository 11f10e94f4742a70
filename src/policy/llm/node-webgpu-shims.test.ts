import { describe, expect, it } from "vitest";
import { copySharedWrites } from "./node-webgpu.js";

type Call = { offset: number; data: ArrayBufferView | ArrayBuffer; dataOffset?: number; size?: number };

/** A stand-in for Dawn's GPUQueue that records writes and refuses views of a SharedArrayBuffer, as Dawn's does. */
function fakeGlobals() {
  const calls: Call[] = [];
  class GPUQueue {
    writeBuffer(_buffer: unknown, offset: number, data: ArrayBufferView | ArrayBuffer, dataOffset?: number, size?: number) {
      if (ArrayBuffer.isView(data) && data.buffer instanceof SharedArrayBuffer) throw new Error("Invalid argument");
      calls.push({ offset, data, dataOffset, size });
    }
  }
  return { globals: { GPUQueue } as Record<string, unknown>, calls, queue: () => new GPUQueue() };
}

describe("WebGPU in Node: writes from a SharedArrayBuffer go through a copy", () => {
  it("copies the written elements of a typed array over shared memory, counting offset and size in elements", () => {
    const { globals, calls, queue } = fakeGlobals();
    copySharedWrites(globals);
    const shared = new Float32Array(new SharedArrayBuffer(6 * 4));
    shared.set([1, 2, 3, 4, 5, 6]);
    const view = shared.subarray(1); // 2, 3, 4, 5, 6 at a byte offset of 4
    queue().writeBuffer({}, 16, view, 1, 2);
    expect(calls).toHaveLength(1);
    const { offset, data, dataOffset, size } = calls[0]!;
    expect([offset, dataOffset, size]).toEqual([16, 0, 8]);
    expect(Array.from(new Float32Array((data as Uint8Array).slice().buffer))).toEqual([3, 4]);
    expect((data as Uint8Array).buffer instanceof SharedArrayBuffer).toBe(false);
  });

  it("copies a whole shared view when no size is given, and counts a DataView in bytes", () => {
    const { globals, calls, queue } = fakeGlobals();
    copySharedWrites(globals);
    const bytes = new Uint8Array(new SharedArrayBuffer(8));
    bytes.set([0, 1, 2, 3, 4, 5, 6, 7]);
    queue().writeBuffer({}, 0, new DataView(bytes.buffer, 2), 1);
    expect(Array.from(calls[0]!.data as Uint8Array)).toEqual([3, 4, 5, 6, 7]);
  });

  it("passes other writes through untouched, and patches a queue once", () => {
    const { globals, calls, queue } = fakeGlobals();
    const prototype = (globals.GPUQueue as { prototype: { writeBuffer: unknown } }).prototype;
    copySharedWrites(globals);
    const patched = prototype.writeBuffer;
    copySharedWrites(globals);
    expect(prototype.writeBuffer).toBe(patched);
    const plain = new Float32Array([1, 2, 3]);
    queue().writeBuffer({}, 4, plain, 1, 1);
    expect(calls).toEqual([{ offset: 4, data: plain, dataOffset: 1, size: 1 }]);
    const shared = new Uint16Array(new SharedArrayBuffer(4));
    queue().writeBuffer({}, 0, shared);
    expect(calls).toHaveLength(2);
  });
});
