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
import type { GpuDeviceLike as EngineGpuDevice } from "./cache-ops.js";
import type { DeviceLossInfo } from "./device-loss.js";
import { loadedPolicyTokenizer } from "./browser-tokenizer.js";
import { ModelPolicy, type ModelPolicyOptions } from "./model-policy.js";
import {
  DEFAULT_HUB_HOST,
  checkDtype,
  checkModelFiles,
  describeLoadError,
  DTYPES,
  needsShaderF16,
  jsonProblem,
  requiredModelFiles,
  resolveModelSource,
  type Dtype,
  type ModelSource,
} from "./model-source.js";

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

export interface BrowserModelSpec extends ModelPolicyOptions {
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
  /** Its device was lost: never reused (its tokenizer still names tokens for the token view). */
  lost?: boolean;
}

// One model stays loaded in the worker between runs (loading compiles kernels and, on WebGPU, shaders).
let loaded: LoadedModel | null = null;

/** `auto` with a dtype that needs shader-f16 on an adapter without it: WASM, rather than a load that must fail. */
function fitDtype(choice: DeviceChoice, requested: DeviceRequest, dtype: Dtype): DeviceChoice {
  if (requested !== "auto" || choice.device !== "webgpu" || choice.shaderF16 || !needsShaderF16(dtype)) return choice;
  return { ...choice, device: "wasm", reason: `WASM: dtype '${dtype}' needs the WebGPU feature 'shader-f16', which this adapter does not have` };
}

async function loadModel(spec: BrowserModelSpec): Promise<LoadedModel> {
  const source = resolveModelSource(spec.model);
  const dtype = spec.dtype ?? "fp32";
  const key = JSON.stringify([spec.model, spec.device ?? "auto", dtype, spec.remoteHost ?? ""]);
  if (loaded?.key === key && !loaded.lost && source.kind !== "local") return loaded;
  const choice = fitDtype(await chooseDevice(spec.device ?? "auto"), spec.device ?? "auto", dtype);
  try {
    checkDtype(source, dtype, choice);
  } catch (e) {
    const file = DTYPES.includes(dtype) ? ` (file ${requiredModelFiles(dtype).at(-1)})` : "";
    throw new Error(`could not load model '${source.spec}'${file}: ${(e as Error).message}`);
  }
  configureEnv(spec, source);
  // Each JSON file the loader reads is parsed here too, so that a parse error can name its file.
  const badJson: { file: string; reason: string }[] = [];
  env.fetch = checkingJson(env.fetch, source, badJson);
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
    // A model on a lost device is not disposed of: its sessions may never answer.
    if (loaded && !loaded.lost) await loaded.model.dispose();
    loaded = { key, model, tokenizer, choice, loadMs: performance.now() - started };
    if (choice.device === "webgpu") await watchDevice();
    return loaded;
  } catch (e) {
    throw describeLoadError(source, e, { dtype, badJson });
  }
}

/** transformers.js's fetch, with each whole JSON response of the model's folder parsed on the side. */
function checkingJson(inner: typeof env.fetch, source: ModelSource, bad: { file: string; reason: string }[]): typeof env.fetch {
  const marker = `${source.id}/`;
  return async (input: string | URL, init?: RequestInit) => {
    const response = await inner(input, init);
    const url = typeof input === "string" ? input : input.href;
    const path = decodeURIComponent(new URL(url, self.location.origin).pathname);
    const at = path.indexOf(marker);
    const file = at < 0 ? "" : path.slice(at + marker.length).replace(/^resolve\/main\//, "");
    if (response.status === 200 && file.endsWith(".json")) {
      const problem = jsonProblem(file, await response.clone().text());
      if (problem) bad.push(problem);
    }
    return response;
  };
}

// The WebGPU device onnxruntime runs on, watched for loss (`GPUDevice.lost`); the listeners are the runs on it.
interface GpuDeviceLike {
  lost: Promise<{ reason: string; message: string }>;
  destroy(): void;
}
let gpuDevice: GpuDeviceLike | null = null;
const lossListeners = new Set<(info: DeviceLossInfo) => void>();

/** Calls `listener` when the device the loaded model runs on is lost; returns the unsubscribe. */
export function onDeviceLost(listener: (info: DeviceLossInfo) => void): () => void {
  lossListeners.add(listener);
  return () => lossListeners.delete(listener);
}

function deviceLost(info: DeviceLossInfo): void {
  if (loaded) loaded.lost = true;
  gpuDevice = null;
  for (const listener of [...lossListeners]) listener(info);
}

/** Onnxruntime's WebGPU device (its backend sets `env.webgpu.device` when it creates its first session). */
async function onnxWebGpuDevice<D = GpuDeviceLike & EngineGpuDevice>(): Promise<D | null> {
  const webgpu = env.backends.onnx.webgpu as { device?: D | Promise<D> } | undefined;
  return (await Promise.resolve(webgpu?.device).catch(() => undefined)) ?? null;
}

async function watchDevice(): Promise<void> {
  const device = await onnxWebGpuDevice<GpuDeviceLike>();
  if (!device || device === gpuDevice || typeof device.destroy !== "function") return;
  gpuDevice = device;
  void device.lost.then((info) => {
    if (gpuDevice === device) deviceLost({ reason: info.reason, message: info.message });
  });
}

/**
 * The test hook's device loss: a real one (`destroy()` on onnxruntime's device, which resolves its `lost` promise
 * as a driver reset would) when a model runs on WebGPU; otherwise the same handler, called with a simulated loss.
 */
export function injectDeviceLoss(): "destroyed" | "simulated" {
  if (gpuDevice) {
    gpuDevice.destroy();
    return "destroyed";
  }
  deviceLost({ reason: "unknown", message: "no WebGPU device in use, so the loss is simulated", simulated: true });
  return "simulated";
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
  // On WebGPU the decode engine moves caches with copies on onnxruntime's own device.
  const device = choice.device === "webgpu" ? await onnxWebGpuDevice() : null;
  const engineOptions = { ...spec.engineOptions, ...(device ? { gpuDevice: () => device } : {}) };
  return { policy: new ModelPolicy(runtime, model, tokenizer, { ...spec, engineOptions }), choice, loadMs };
}

/** Whether the loader will find a file: a HEAD request to where transformers.js will ask, or the picked folder. */
async function fileExists(spec: BrowserModelSpec, source: ModelSource, file: string): Promise<true | string> {
  if (source.kind === "local") return spec.localFiles?.has(file) ? true : "not in the picked folder";
  const url =
    source.kind === "hub"
      ? `${spec.remoteHost || DEFAULT_HUB_HOST}${source.id}/resolve/main/${file}`
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
    env.remoteHost = spec.remoteHost || DEFAULT_HUB_HOST;
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

/** A tokenizer loaded without its model (the token check of a saved run of that model). */
let tokenizerOnly: { model: string; tokenizer: Transformers.PreTrainedTokenizer } | null = null;

/**
 * The tokenizer of `model` (the loaded model's, or one loaded alone), for the token check in the worker; else the
 * loaded model's name and tokenizer (the caller sees it is another model's); null: none.
 */
export function loadedTokenizer(model?: string): { model: string; tokenizer: Transformers.PreTrainedTokenizer } | null {
  if (tokenizerOnly && tokenizerOnly.model === model) return tokenizerOnly;
  const policyTokenizer = model === undefined ? null : loadedPolicyTokenizer(model);
  if (policyTokenizer) return { model: model!, tokenizer: policyTokenizer };
  if (!loaded) return tokenizerOnly;
  const [name] = JSON.parse(loaded.key) as [string];
  return { model: name, tokenizer: loaded.tokenizer };
}

/**
 * Loads `model`'s tokenizer alone (its tokenizer files, no weights): a built-in's from this site, a hub model's from
 * the hub (`remoteHost`, else huggingface.co), a picked folder's from its files (`localFiles`).
 */
export async function loadTokenizerOnly(model: string, from: { remoteHost?: string; localFiles?: Map<string, Blob> } = {}): Promise<void> {
  const source = resolveModelSource(model);
  if (source.kind === "local" && !from.localFiles) throw new Error(`'${model}' is a folder picked in the set-up: pick it again to load its tokenizer`);
  configureEnv({ model, ...from }, source);
  tokenizerOnly = { model, tokenizer: await AutoTokenizer.from_pretrained(source.id) };
}

/**
 * Each token's text (nothing skipped) and whether it is special, in the vocabulary of `model` (a run's model, or its
 * text policy's `tokenizer`); null when that tokenizer is not loaded here.
 */
export function describeTokens(ids: readonly number[], model: string): { texts: string[]; special: boolean[] } | null {
  const found = loadedTokenizer(model);
  if (!found || found.model !== model) return null;
  const tokenizer = found.tokenizer;
  const specialIds = new Set(tokenizer.all_special_ids.map(Number));
  return {
    texts: ids.map((id) => tokenizer.decode([id], { skip_special_tokens: false })),
    special: ids.map((id) => specialIds.has(id)),
  };
}
