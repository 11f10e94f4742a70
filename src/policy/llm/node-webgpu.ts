/**
 * WebGPU in Node: onnxruntime-web's WebGPU backend on Dawn's Node binding (the npm package `webgpu`), the backend and
 * kernels the page runs, so that a machine with a GPU and no browser (a GPU server, a CI runner) runs the model
 * policy on WebGPU with `npm run rollout` and the benchmarks.
 *
 * transformers.js in Node is bound to onnxruntime-node, whose WebGPU build gives JavaScript no GPU device (the decode
 * engine moves caches with copies on one) and aborts the process when a GPU tensor is read. So the model loads as
 * usual, and its decoder session is then replaced by an onnxruntime-web session on WebGPU made from the same graph
 * file (`useWebGpuDecoder`), behind an adapter that hands the outputs over as onnxruntime-node tensors (the only ones
 * transformers.js's `Tensor` wraps). As on the page, the `present` caches stay on the GPU and everything else comes
 * back to the CPU.
 */

import type * as Transformers from "@huggingface/transformers";
import { Tensor as OrtNodeTensor } from "onnxruntime-node";
import type { GpuDeviceLike } from "./cache-ops.js";

/** The adapter a run used, as its result and the benchmarks report it. */
export interface NodeWebGpuAdapter {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** A software rasterizer (SwiftShader, llvmpipe): correct and slow. */
  software: boolean;
}

/** What this module needs of onnxruntime-web (typed here: its types pull in the DOM's WebGPU typings). */
interface OrtWeb {
  env: { wasm: { numThreads?: number }; webgpu: { adapter?: unknown; powerPreference?: string; device: Promise<unknown> } };
  InferenceSession: { create(model: Uint8Array, options: Record<string, unknown>): Promise<OrtWebSession> };
}
interface OrtTensorLike {
  type: string;
  dims: readonly number[];
  data: unknown;
  location: string;
  gpuBuffer?: unknown;
  getData(): Promise<unknown>;
  dispose(): void;
}
interface OrtWebSession {
  inputNames: readonly string[];
  outputNames: readonly string[];
  inputMetadata: unknown;
  outputMetadata: unknown;
  run(feeds: Record<string, unknown>, fetches?: unknown): Promise<Record<string, OrtTensorLike>>;
  release(): Promise<void>;
}
interface GpuAdapterLike {
  info?: { vendor?: string; architecture?: string; device?: string; description?: string };
}
interface GpuLike {
  requestAdapter(options?: { powerPreference?: string }): Promise<GpuAdapterLike | null>;
}
interface DawnModule {
  create(flags: string[]): GpuLike;
  globals: Record<string, unknown>;
}


interface NodeWebGpu {
  ort: OrtWeb;
  adapter: NodeWebGpuAdapter;
}

let started: Promise<NodeWebGpu> | null = null;
let adapterInUse: NodeWebGpuAdapter | null = null;

/** The adapter the process's WebGPU models run on (null before the first one loads). */
export const webGpuAdapterInUse = (): NodeWebGpuAdapter | null => adapterInUse;

/** Dawn, the adapter and onnxruntime-web, set up once per process. */
export function nodeWebGpu(): Promise<NodeWebGpu> {
  started ??= start().catch((e: unknown) => {
    started = null;
    throw e;
  });
  return started;
}

// The package names are held in variables so that neither TypeScript nor a bundler resolves them: `webgpu` is an
// optional dependency, and this module is only ever loaded in Node.
const DAWN_PACKAGE = "webgpu";
const ORT_WEB_WEBGPU = "onnxruntime-web/webgpu";

async function start(): Promise<NodeWebGpu> {
  let dawn: DawnModule;
  try {
    dawn = (await import(DAWN_PACKAGE)) as DawnModule;
  } catch (e) {
    throw new Error(
      `device 'webgpu' in Node needs the npm package 'webgpu' (Dawn's Node binding, an optional dependency of the lab), which did not load: ${(e as Error).message}`,
    );
  }
  Object.assign(globalThis, dawn.globals);
  copySharedWrites(dawn.globals);
  const gpu = dawn.create([]);
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) {
    throw new Error(
      "device 'webgpu': Dawn found no WebGPU adapter (no Vulkan driver it accepts). On a machine without a GPU, " +
        "VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json gives Chromium's software one (correct, slow)",
    );
  }
  // onnxruntime-web looks for `navigator.gpu`; Node 20 has no navigator, later versions one without `gpu`.
  const navigator = (globalThis as { navigator?: object }).navigator;
  if (navigator) Object.defineProperty(navigator, "gpu", { value: gpu, configurable: true });
  else Object.defineProperty(globalThis, "navigator", { value: { gpu }, configurable: true, writable: true });
  const ort = (await import(ORT_WEB_WEBGPU)) as OrtWeb;
  // The model runs on the GPU: one WebAssembly thread, so that no worker threads keep the process alive.
  ort.env.wasm.numThreads = 1;
  ort.env.webgpu.adapter = adapter;
  adapterInUse = describeAdapter(adapter);
  return { ort, adapter: adapterInUse };
}

const SOFTWARE_ADAPTER = /swiftshader|llvmpipe|lavapipe|software/i;

function describeAdapter(adapter: GpuAdapterLike): NodeWebGpuAdapter {
  const info = adapter.info ?? {};
  const named = { vendor: info.vendor ?? "", architecture: info.architecture ?? "", device: info.device ?? "", description: info.description ?? "" };
  return { ...named, software: SOFTWARE_ADAPTER.test(Object.values(named).join(" ")) };
}

/**
 * onnxruntime-web writes GPU buffers straight from its WebAssembly memory, a SharedArrayBuffer; Dawn's Node binding
 * refuses views of one ("Invalid argument"), which browsers accept. Such writes go through a copy.
 */
export function copySharedWrites(globals: Record<string, unknown>): void {
  const queue = (globals.GPUQueue as { prototype: Record<string | symbol, unknown> } | undefined)?.prototype;
  const patched = Symbol.for("rollout-lab.copySharedWrites");
  if (!queue || queue[patched]) return;
  type WriteBuffer = (buffer: unknown, offset: number, data: ArrayBufferView | ArrayBuffer, dataOffset?: number, size?: number) => void;
  const writeBuffer = queue.writeBuffer as WriteBuffer;
  queue.writeBuffer = function (this: unknown, buffer: unknown, offset: number, data: ArrayBufferView | ArrayBuffer, dataOffset?: number, size?: number) {
    if (!ArrayBuffer.isView(data) || !(data.buffer instanceof SharedArrayBuffer)) {
      return writeBuffer.call(this, buffer, offset, data, dataOffset, size);
    }
    // dataOffset and size count elements of a typed array, bytes of a DataView.
    const unit = "BYTES_PER_ELEMENT" in data ? (data as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT : 1;
    const start = (dataOffset ?? 0) * unit;
    const length = size === undefined ? data.byteLength - start : size * unit;
    const copy = new Uint8Array(length);
    copy.set(new Uint8Array(data.buffer, data.byteOffset + start, length));
    return writeBuffer.call(this, buffer, offset, copy, 0, length);
  };
  queue[patched] = true;
}

export interface WebGpuDecoder {
  device: GpuDeviceLike;
  adapter: NodeWebGpuAdapter;
}

/**
 * Replaces `model`'s decoder session by one on WebGPU made from `graph` (the ONNX file transformers.js loaded, with
 * its external data files by name), and releases the CPU one. Returns onnxruntime-web's device (the engine's cache
 * copies run on it) and the adapter.
 */
export async function useWebGpuDecoder(
  model: Transformers.PreTrainedModel,
  graph: Uint8Array,
  externalData: { path: string; data: Uint8Array }[],
): Promise<WebGpuDecoder> {
  const { ort, adapter } = await nodeWebGpu();
  const sessions = (model as unknown as { sessions: Record<string, { outputNames: readonly string[]; release(): Promise<void>; config?: object }> }).sessions;
  const cpu = sessions.model;
  if (!cpu) throw new Error("device 'webgpu' in Node: the model has no decoder session named 'model'");
  const caches = cpu.outputNames.filter((name) => name.startsWith("present"));
  const session = await ort.InferenceSession.create(graph, {
    executionProviders: ["webgpu"],
    // Errors only: its warning that shape computations run on the CPU is by design.
    logSeverityLevel: 3,
    preferredOutputLocation: Object.fromEntries(caches.map((name) => [name, "gpu-buffer"])),
    ...(externalData.length > 0 ? { externalData } : {}),
  });
  const device = (await ort.env.webgpu.device) as (GpuDeviceLike & { lost?: Promise<{ reason: string; message: string }> }) | undefined;
  if (!device) throw new Error("device 'webgpu' in Node: onnxruntime-web made a session but gave no WebGPU device");
  sessions.model = webGpuSessionAdapter(session, { ...cpu.config, device: "webgpu" }, device.lost ?? new Promise(() => {}));
  await cpu.release();
  return { device, adapter };
}

/**
 * The onnxruntime-web session as transformers.js and the engine use a session, its outputs as onnxruntime-node
 * tensors: transformers.js's `Tensor` wraps only instances of onnxruntime-node's class (an `instanceof` check).
 */
function webGpuSessionAdapter(session: OrtWebSession, config: object, lost: Promise<{ reason: string; message: string }>) {
  // A lost device (a driver reset, destroy()) leaves onnxruntime-web's pending and later runs unsettled, and Node
  // exits quietly when nothing else is pending: such runs fail instead, saying why.
  const lostError = lost.then(({ reason, message }) => new Error(`the WebGPU device was lost (${reason})${message ? `: ${message}` : ""}`));
  let lostAlready: Error | null = null;
  void lostError.then((e) => (lostAlready = e));
  type GpuOptions = Parameters<typeof OrtNodeTensor.fromGpuBuffer>[1];
  const adopt = (t: OrtTensorLike) =>
    t.location === "gpu-buffer"
      ? OrtNodeTensor.fromGpuBuffer(t.gpuBuffer as never, { dataType: t.type, dims: t.dims, dispose: () => t.dispose(), download: () => t.getData() } as GpuOptions)
      : new OrtNodeTensor(t.type as "float32", t.data as Float32Array, t.dims);
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    inputMetadata: session.inputMetadata,
    outputMetadata: session.outputMetadata,
    config,
    async run(feeds: Record<string, unknown>, fetches?: unknown) {
      if (lostAlready) throw lostAlready;
      const out = await Promise.race([
        session.run(feeds, fetches),
        lostError.then((e) => {
          throw e;
        }),
      ]);
      return Object.fromEntries(Object.entries(out).map(([name, t]) => [name, adopt(t)]));
    },
    release: () => session.release(),
  };
}
