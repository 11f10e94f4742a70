/**
 * The two cache moves the decode engine makes, where the tensors live: rows into one left-padded batch, and a run
 * of positions out of a batch row into a sample's own cache. On CPU and WASM they are typed-array copies
 * (`kv-cache.ts`); on WebGPU they are GPU buffer-to-buffer copies on onnxruntime's own device, so the caches never
 * leave the GPU.
 */

import type * as Transformers from "@huggingface/transformers";
import { assembleBatch, cacheSize, extract, type CacheArray, type CacheLayout, type CacheView } from "./kv-cache.js";

type Tensor = Transformers.Tensor;

/** Positions `[start, start + length)` of row `row` of cache tensors `[*, heads, seq, dim]`. */
export interface TensorView {
  tensors: readonly Tensor[];
  row: number;
  seq: number;
  start: number;
  length: number;
}

export interface CacheOps {
  /** The views as one batch, each row left-padded to the longest; each row's padding. */
  assemble(views: readonly TensorView[]): { tensors: Tensor[]; seq: number; pads: number[] };
  /**
   * A view as cache tensors of its own (`[1, heads, length, dim]`); the view's own tensors when they already are,
   * unless `fresh` (the view is another row's live cache: what is returned here is disposed once used). On the CPU
   * fresh tensors may wrap the same arrays: disposing them only unlinks them there.
   */
  extract(view: TensorView, fresh?: boolean): Tensor[];
}

export function cpuCacheOps(layout: CacheLayout, TensorClass: typeof Transformers.Tensor): CacheOps {
  const wrap = (data: CacheArray[], batch: number, seq: number) =>
    data.map((d, n) => new TensorClass(layout.type, d, [batch, layout.heads[n]!, seq, layout.dims[n]!]));
  return {
    assemble(views) {
      const { data, seq, pads } = assembleBatch(layout, views.map(cpuView));
      return { tensors: wrap(data, views.length, seq), seq, pads };
    },
    extract(view, fresh = false) {
      if (!fresh && isWhole(layout, view)) return [...view.tensors];
      return wrap(extract(layout, cpuView(view)), 1, view.length);
    },
  };
}

/** A view of CPU cache tensors as their typed arrays. */
export const cpuView = (v: TensorView): CacheView => ({ data: v.tensors.map((t) => t.data as CacheArray), row: v.row, seq: v.seq, start: v.start, length: v.length });

const isWhole = (layout: CacheLayout, v: TensorView) =>
  v.row === 0 && v.start === 0 && v.length === v.seq && v.tensors.every((t, n) => t.size === cacheSize(layout, n, 1, v.seq));

/** The WebGPU objects the GPU copies need (the DOM typings here have no WebGPU). */
export interface GpuBufferLike {
  destroy(): void;
}
export interface GpuDeviceLike {
  createBuffer(descriptor: { size: number; usage: number }): GpuBufferLike;
  createCommandEncoder(): { copyBufferToBuffer(src: GpuBufferLike, srcOffset: number, dst: GpuBufferLike, dstOffset: number, size: number): void; finish(): unknown };
  queue: { submit(commands: unknown[]): void };
}
/** onnxruntime's tensor class: makes a tensor over a GPU buffer (`Tensor.fromGpuBuffer`). */
interface OrtTensorClass {
  fromGpuBuffer(buffer: GpuBufferLike, options: { dataType: string; dims: readonly number[]; dispose?: () => void }): unknown;
}

// GPUBufferUsage.STORAGE | COPY_SRC | COPY_DST: what onnxruntime's WebGPU backend wants of an input buffer.
const CACHE_BUFFER_USAGE = 0x80 | 0x04 | 0x08;

/**
 * Cache moves on the GPU: each row's head is one contiguous run of `length × dim` values in a `[B, heads, seq, dim]`
 * buffer, so a move is one `copyBufferToBuffer` per row, head and tensor, submitted before the next forward pass
 * (the queue keeps them in order). New buffers start zeroed (WebGPU's rule), which is the padding.
 */
export function gpuCacheOps(layout: CacheLayout, TensorClass: typeof Transformers.Tensor, device: GpuDeviceLike): CacheOps {
  const bytes = layout.type === "float16" ? 2 : 4;
  const bufferOf = (t: Tensor) => (t as unknown as { ort_tensor: { gpuBuffer: GpuBufferLike } }).ort_tensor.gpuBuffer;
  const make = (like: Tensor, n: number, batch: number, seq: number): { buffer: GpuBufferLike; tensor: Tensor } => {
    const size = Math.max(4, cacheSize(layout, n, batch, seq) * bytes);
    const buffer = device.createBuffer({ size: Math.ceil(size / 4) * 4, usage: CACHE_BUFFER_USAGE });
    const Ort = (like as unknown as { ort_tensor: { constructor: OrtTensorClass } }).ort_tensor.constructor;
    const dims = [batch, layout.heads[n]!, seq, layout.dims[n]!];
    const ort = Ort.fromGpuBuffer(buffer, { dataType: layout.type, dims, dispose: () => buffer.destroy() });
    return { buffer, tensor: new TensorClass(ort as ConstructorParameters<typeof TensorClass>[0] as never) };
  };
  /** Copies each view into row `row` of `targets` (`seq` positions), at its padding. */
  const copy = (encoder: ReturnType<GpuDeviceLike["createCommandEncoder"]>, view: TensorView, targets: GpuBufferLike[], row: number, seq: number, at: number) => {
    if (view.length === 0) return;
    layout.names.forEach((_, n) => {
      const heads = layout.heads[n]!;
      const dim = layout.dims[n]!;
      const source = bufferOf(view.tensors[n]!);
      for (let h = 0; h < heads; h++) {
        const from = ((view.row * heads + h) * view.seq + view.start) * dim * bytes;
        const to = ((row * heads + h) * seq + at) * dim * bytes;
        encoder.copyBufferToBuffer(source, from, targets[n]!, to, view.length * dim * bytes);
      }
    });
  };
  return {
    assemble(views) {
      const seq = Math.max(0, ...views.map((v) => v.length));
      const made = layout.names.map((_, n) => make(views[0]!.tensors[n]!, n, views.length, seq));
      const encoder = device.createCommandEncoder();
      const pads = views.map((view, row) => {
        const pad = seq - view.length;
        copy(encoder, view, made.map((m) => m.buffer), row, seq, pad);
        return pad;
      });
      device.queue.submit([encoder.finish()]);
      return { tensors: made.map((m) => m.tensor), seq, pads };
    },
    extract(view, fresh = false) {
      if (!fresh && isWhole(layout, view)) return [...view.tensors];
      const made = layout.names.map((_, n) => make(view.tensors[n]!, n, 1, view.length));
      const encoder = device.createCommandEncoder();
      copy(encoder, view, made.map((m) => m.buffer), 0, view.length, 0);
      device.queue.submit([encoder.finish()]);
      return made.map((m) => m.tensor);
    },
  };
}
