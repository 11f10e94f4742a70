/**
 * The browser entry of the model policy (it runs inside a Web Worker): transformers.js's web build on
 * onnxruntime-web, with its wasm files served by the app itself (nothing from a CDN), WebGPU when a hardware
 * adapter exists, WASM otherwise.
 */

import type * as Transformers from "@huggingface/transformers";
import {
  AutoModelForCausalLM,
  AutoTokenizer,
  BaseStreamer,
  env,
  LogitsProcessor,
  StoppingCriteria,
  Tensor,
  type ProgressInfo,
} from "@huggingface/transformers";
import { ModelPolicy, type SamplingSettings } from "./model-policy.js";
import { checkDtype, checkModelFiles, describeLoadError, resolveModelSource, type Dtype, type ModelSource } from "./model-source.js";

export type DeviceRequest = "auto" | "wasm" | "webgpu";

export interface DeviceChoice {
  device: "wasm" | "webgpu";
  /** Why this device, in words for the UI. */
  reason: string;
  shaderF16: boolean;
}

/** The few WebGPU fields the device choice reads (the DOM typings here do not include WebGPU). */
interface GpuAdapterLike {
  features: { has(name: string): boolean };
  info?: { vendor?: string; architecture?: string; isFallbackAdapter?: boolean };
  isFallbackAdapter?: boolean;
}
interface GpuLike {
  requestAdapter(): Promise<GpuAdapterLike | null>;
}

/** WebGPU only with a hardware adapter; a software fallback (SwiftShader) is slower than WASM for these models. */
export async function chooseDevice(requested: DeviceRequest): Promise<DeviceChoice> {
  const gpu = (globalThis.navigator as { gpu?: GpuLike } | undefined)?.gpu;
  const adapter = gpu ? await gpu.requestAdapter().catch(() => null) : null;
  const info = adapter?.info;
  const software = Boolean(adapter && (info?.isFallbackAdapter || adapter.isFallbackAdapter || info?.architecture === "swiftshader"));
  const shaderF16 = Boolean(adapter?.features.has("shader-f16"));
  const described = adapter ? `${info?.vendor || "unknown vendor"} ${info?.architecture || ""}`.trim() : "";
  if (requested === "wasm") return { device: "wasm", reason: "WASM was chosen", shaderF16 };
  if (requested === "webgpu") {
    if (!adapter) throw new Error("WebGPU was requested but this browser offers no WebGPU adapter");
    return { device: "webgpu", reason: `WebGPU was chosen (${software ? "software adapter: " : ""}${described})`, shaderF16 };
  }
  if (!gpu) return { device: "wasm", reason: "WASM: this browser has no WebGPU", shaderF16 };
  if (!adapter) return { device: "wasm", reason: "WASM: no WebGPU adapter is available", shaderF16 };
  if (software) return { device: "wasm", reason: `WASM: the only WebGPU adapter is a software fallback (${described})`, shaderF16 };
  return { device: "webgpu", reason: `WebGPU on ${described}`, shaderF16 };
}

export interface BrowserModelSpec extends SamplingSettings {
  model: string;
  device?: DeviceRequest;
  dtype?: Dtype;
  /** Where the app serves its built-in models and onnxruntime-web's files (same origin). */
  modelsPath?: string;
  ortPath?: string;
  /** A stand-in hub (tests) instead of huggingface.co. */
  remoteHost?: string;
  /** WASM threads (needs cross-origin isolation); 1 by default: on few cores a second thread slows small models. */
  numThreads?: number;
  /** A model folder the user picked: relative path → file. */
  localFiles?: Map<string, Blob>;
  onProgress?: (progress: { file: string; loaded: number; total: number }) => void;
}

const LOCAL_PREFIX = "/__picked__/";

interface LoadedModel {
  key: string;
  model: Transformers.PreTrainedModel;
  tokenizer: Transformers.PreTrainedTokenizer;
  choice: DeviceChoice;
  loadMs: number;
}

// One model stays loaded in the worker between runs (loading compiles kernels and, on WebGPU, shaders).
let loaded: LoadedModel | null = null;

async function loadModel(spec: BrowserModelSpec): Promise<LoadedModel> {
  const source = resolveModelSource(spec.model);
  const dtype = spec.dtype ?? "fp32";
  const key = JSON.stringify([spec.model, spec.device ?? "auto", dtype, spec.remoteHost ?? ""]);
  if (loaded?.key === key && source.kind !== "local") return loaded;
  const choice = await chooseDevice(spec.device ?? "auto");
  checkDtype(source, dtype, choice);
  configureEnv(spec, source);
  const started = performance.now();
  try {
    await checkModelFiles(source, dtype, (file) => fileExists(spec, source, file));
    const tokenizer = await AutoTokenizer.from_pretrained(source.id);
    const model = await AutoModelForCausalLM.from_pretrained(source.id, {
      device: choice.device,
      dtype,
      progress_callback: (p: ProgressInfo) => {
        if (p.status === "progress") spec.onProgress?.({ file: p.file, loaded: p.loaded, total: p.total });
      },
    });
    await loaded?.model.dispose();
    loaded = { key, model, tokenizer, choice, loadMs: performance.now() - started };
    return loaded;
  } catch (e) {
    throw describeLoadError(source, e);
  }
}

/** The loaded model with the runtime it runs on (the benchmark page compares against a bare `generate`). */
export async function loadBrowserModel(spec: BrowserModelSpec) {
  const { model, tokenizer, choice, loadMs } = await loadModel(spec);
  return { model, tokenizer, choice, loadMs, runtime: { Tensor, LogitsProcessor, StoppingCriteria, BaseStreamer } };
}

/** A policy on the (cached) model with this run's sampling settings. */
export async function browserModelPolicy(
  spec: BrowserModelSpec,
): Promise<{ policy: ModelPolicy; choice: DeviceChoice; loadMs: number }> {
  const { model, tokenizer, choice, loadMs } = await loadModel(spec);
  const runtime = { Tensor, LogitsProcessor, StoppingCriteria, BaseStreamer };
  return { policy: new ModelPolicy(runtime, model, tokenizer, spec), choice, loadMs };
}

/** Whether the loader will find a file: a HEAD request to where transformers.js will ask, or the picked folder. */
async function fileExists(spec: BrowserModelSpec, source: ModelSource, file: string): Promise<true | string> {
  if (source.kind === "local") return spec.localFiles?.has(file) ? true : "not in the picked folder";
  const url =
    source.kind === "hub"
      ? `${spec.remoteHost ?? "https://huggingface.co/"}${source.id}/resolve/main/${file}`
      : `${spec.modelsPath ?? "/models/"}${source.id}/${file}`;
  try {
    const response = await fetch(url, { method: "HEAD" });
    return response.ok ? true : `${response.status} ${response.statusText || "error"} at ${url}`;
  } catch (e) {
    return `cannot reach ${url} (${(e as Error).message})`;
  }
}

function configureEnv(spec: BrowserModelSpec, source: ModelSource): void {
  const ort = spec.ortPath ?? new URL("/ort/", self.location.origin).href;
  const wasm = env.backends.onnx.wasm!;
  wasm.wasmPaths = { mjs: `${ort}ort-wasm-simd-threaded.asyncify.mjs`, wasm: `${ort}ort-wasm-simd-threaded.asyncify.wasm` };
  // On few cores a second thread slows a small model down (browser-inference.md §8).
  wasm.numThreads = spec.numThreads ?? 1;
  env.useBrowserCache = source.kind === "hub";
  if (source.kind === "hub") {
    env.allowLocalModels = false;
    env.allowRemoteModels = true;
    if (spec.remoteHost) env.remoteHost = spec.remoteHost;
    env.fetch = fetch.bind(globalThis);
    return;
  }
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  if (source.kind === "builtin") {
    // A path, not a URL: transformers.js skips tokenizer discovery for URL-looking locations.
    env.localModelPath = spec.modelsPath ?? "/models/";
    env.fetch = fetch.bind(globalThis);
    return;
  }
  // A picked folder is served from memory through transformers.js's fetch hook.
  const files = spec.localFiles ?? new Map<string, Blob>();
  env.localModelPath = LOCAL_PREFIX;
  env.fetch = async (input: RequestInfo | URL) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const path = decodeURIComponent(new URL(url, self.location.origin).pathname);
    if (!path.startsWith(`${LOCAL_PREFIX}${source.id}/`)) return fetch(input);
    const file = files.get(path.slice(`${LOCAL_PREFIX}${source.id}/`.length));
    return file ? new Response(file) : new Response("not found", { status: 404 });
  };
}

/** Each token's text (nothing skipped) and whether it is special, in the loaded model's own vocabulary. */
export function describeTokens(ids: readonly number[]): { texts: string[]; special: boolean[] } | null {
  const tokenizer = loaded?.tokenizer;
  if (!tokenizer) return null;
  const specialIds = new Set(tokenizer.all_special_ids.map(Number));
  return {
    texts: ids.map((id) => tokenizer.decode([id], { skip_special_tokens: false })),
    special: ids.map((id) => specialIds.has(id)),
  };
}
