import { Tensor } from "@huggingface/transformers";
import { describe, expect, it } from "vitest";
import { cpuCacheOps, gpuCacheOps, type GpuBufferLike, type GpuDeviceLike, type TensorView } from "./cache-ops.js";
import type { CacheLayout } from "./kv-cache.js";

const layout: CacheLayout = { names: ["past_key_values.0.key", "past_key_values.0.value"], type: "float32", heads: [2, 2], dims: [3, 3] };

/** A GPU stand-in for the copies: buffers are byte arrays, `copyBufferToBuffer` copies bytes when submitted. */
class FakeBuffer implements GpuBufferLike {
  destroyed = false;
  constructor(readonly bytes: Uint8Array) {}
  destroy(): void {
    this.destroyed = true;
  }
}
function fakeDevice(): GpuDeviceLike & { copies: number } {
  const device = {
    copies: 0,
    createBuffer: ({ size }: { size: number }) => new FakeBuffer(new Uint8Array(size)),
    createCommandEncoder: () => {
      const pending: (() => void)[] = [];
      return {
        copyBufferToBuffer: (src: GpuBufferLike, from: number, dst: GpuBufferLike, to: number, size: number) => {
          expect(from % 4).toBe(0);
          expect(to % 4).toBe(0);
          expect(size % 4).toBe(0);
          pending.push(() => (dst as FakeBuffer).bytes.set((src as FakeBuffer).bytes.subarray(from, from + size), to));
        },
        finish: () => pending,
      };
    },
    queue: {
      submit: (commands: unknown[]) => {
        for (const list of commands as (() => void)[][]) {
          for (const run of list) {
            device.copies += 1;
            run();
          }
        }
      },
    },
  };
  return device;
}

/** A tensor "on the GPU" as the ops see one: an ort tensor with a gpuBuffer, whose class makes more of them. */
class FakeOrtTensor {
  readonly location = "gpu-buffer";
  constructor(
    readonly gpuBuffer: FakeBuffer,
    readonly dims: number[],
  ) {}
  get size() {
    return this.dims.reduce((a, b) => a * b, 1);
  }
  static fromGpuBuffer(buffer: FakeBuffer, options: { dims: readonly number[] }) {
    return new FakeOrtTensor(buffer, [...options.dims]);
  }
}
class FakeTensor {
  constructor(readonly ort_tensor: FakeOrtTensor) {}
  get size() {
    return this.ort_tensor.size;
  }
  get dims() {
    return this.ort_tensor.dims;
  }
  values(): number[] {
    return Array.from(new Float32Array(this.ort_tensor.gpuBuffer.bytes.buffer, 0, this.size));
  }
}

const seqTensor = (batch: number, seq: number, base: number) => {
  const data = Float32Array.from({ length: batch * 2 * seq * 3 }, (_, i) => base + i);
  return data;
};

describe("cache moves", () => {
  it("on the GPU, buffer copies give what the typed-array copies give: a left-padded batch, a row's run of positions", () => {
    const cpu = cpuCacheOps(layout, Tensor);
    const device = fakeDevice();
    const gpu = gpuCacheOps(layout, FakeTensor as unknown as typeof Tensor, device);
    // Two samples' caches (4 and 2 positions) and a 3-row batch of 5 positions whose row 1 starts at 2.
    const sources: { batch: number; seq: number; view: Omit<TensorView, "tensors"> }[] = [
      { batch: 1, seq: 4, view: { row: 0, seq: 4, start: 0, length: 4 } },
      { batch: 1, seq: 2, view: { row: 0, seq: 2, start: 0, length: 2 } },
      { batch: 3, seq: 5, view: { row: 1, seq: 5, start: 2, length: 3 } },
    ];
    const cpuViews: TensorView[] = [];
    const gpuViews: TensorView[] = [];
    sources.forEach((s, k) => {
      const data = layout.names.map((_, n) => seqTensor(s.batch, s.seq, 1000 * k + 100 * n));
      cpuViews.push({ ...s.view, tensors: data.map((d) => new Tensor("float32", d, [s.batch, 2, s.seq, 3])) });
      gpuViews.push({
        ...s.view,
        tensors: data.map((d) => new FakeTensor(new FakeOrtTensor(new FakeBuffer(new Uint8Array(d.buffer)), [s.batch, 2, s.seq, 3])) as unknown as Tensor),
      });
    });
    const a = cpu.assemble(cpuViews);
    const b = gpu.assemble(gpuViews);
    expect(b.seq).toBe(a.seq);
    expect(b.pads).toEqual([0, 2, 1]);
    b.tensors.forEach((t, n) => expect((t as unknown as FakeTensor).values()).toEqual(Array.from(a.tensors[n]!.data as Float32Array)));
    // Out of the batch again: row 2 (the third view) is positions [1, 4) of the 4-position batch.
    const out = { row: 2, seq: a.seq, start: a.pads[2]!, length: 3 };
    const x = cpu.extract({ ...out, tensors: a.tensors });
    const y = gpu.extract({ ...out, tensors: b.tensors });
    y.forEach((t, n) => expect((t as unknown as FakeTensor).values()).toEqual(Array.from(x[n]!.data as Float32Array)));
    expect(Array.from(x[0]!.data as Float32Array)).toEqual(
      // Sample 2's row 1, heads 0 and 1, positions 2–4 of 5: the original values.
      [0, 1].flatMap((h) => Array.from({ length: 9 }, (_, i) => 2000 + ((1 * 2 + h) * 5 + 2) * 3 + i)),
    );
    // One copy per row, head and tensor.
    expect(device.copies).toBe(3 * 2 * 2 + 2 * 2);
  });

  it("a whole one-row view is its own tensors, not a copy", () => {
    const cpu = cpuCacheOps(layout, Tensor);
    const tensors = layout.names.map(() => new Tensor("float32", new Float32Array(2 * 4 * 3), [1, 2, 4, 3]));
    expect(cpu.extract({ tensors, row: 0, seq: 4, start: 0, length: 4 })[0]).toBe(tensors[0]);
    expect(cpu.extract({ tensors, row: 0, seq: 4, start: 0, length: 3 })[0]).not.toBe(tensors[0]);
  });
});
