/**
 * The Node entry of the model policy: transformers.js on onnxruntime-node (CPU), or with `device: "webgpu"` its
 * decoder on onnxruntime-web's WebGPU backend through Dawn (`node-webgpu.ts`). The built-in models are built on
 * demand (in about a second), so `npm run rollout` with `"policy": {"kind": "model", "model": "builtin:tiny"}`
 * works on a fresh clone after `npm ci` alone.
 */

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  AutoModelForCausalLM,
  AutoTokenizer,
  BaseStreamer,
  env,
  LogitsProcessor,
  StoppingCriteria,
  Tensor,
} from "@huggingface/transformers";
import { writeBuiltinFolder } from "../builtin-model/write-folder.js";
import { ModelPolicy, type ModelPolicyOptions } from "./model-policy.js";
import { checkDtype, checkModelFiles, DEFAULT_HUB_HOST, describeLoadError, jsonProblem, modelGraphFile, resolveModelSource, type Dtype } from "./model-source.js";
import { useWebGpuDecoder, type NodeWebGpuAdapter } from "./node-webgpu.js";

/** The repository's `public/models`: where `npm run build:model` writes and the app serves from. */
export const DEFAULT_MODELS_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../public/models");

export interface NodeModelSpec extends ModelPolicyOptions {
  model: string;
  device?: "auto" | "cpu" | "wasm" | "webgpu";
  dtype?: Dtype;
  /** Where built-in models live (built there when missing). */
  modelsRoot?: string;
  /** A stand-in hub instead of huggingface.co (tests). */
  remoteHost?: string;
}

export async function loadNodeModelPolicy(spec: NodeModelSpec): Promise<ModelPolicy> {
  const { runtime, model, tokenizer, gpuDevice } = await loadNodeModel(spec);
  // On WebGPU the decode engine moves caches with copies on onnxruntime-web's device, as in the page.
  const engineOptions = { ...spec.engineOptions, ...(gpuDevice ? { gpuDevice: () => gpuDevice } : {}) };
  return new ModelPolicy(runtime, model, tokenizer, { ...spec, engineOptions });
}

/** The loaded model, its tokenizer and the runtime classes (the benchmark compares against a bare `generate`). */
export async function loadNodeModel(spec: NodeModelSpec) {
  if (spec.device === "wasm") throw new Error("device 'wasm' runs in the browser; in Node the model runs on 'cpu' or 'webgpu'");
  const webgpu = spec.device === "webgpu";
  const source = resolveModelSource(spec.model);
  const dtype = spec.dtype ?? "fp32";
  // fp16 on WebGPU: onnxruntime-web checks 'shader-f16' itself when it makes the session.
  checkDtype(source, dtype, { device: "cpu", shaderF16: false });
  let id = source.id;
  let localFolder: string | null = null;
  // The folder transformers.js reads the model's files from (for the WebGPU decoder's graph).
  let filesAt = (): string => join(env.cacheDir ?? "", id);
  if (source.kind === "builtin") {
    const root = spec.modelsRoot ?? DEFAULT_MODELS_ROOT;
    writeBuiltinFolder(root, source.preset);
    loadFromLocalRoot(root);
    filesAt = () => join(root, source.id);
  } else if (source.kind === "local") {
    const folder = resolve(source.path);
    if (!existsSync(folder) || !statSync(folder).isDirectory()) {
      throw new Error(`could not load model '${spec.model}': no such folder ${folder}`);
    }
    await checkModelFiles(source, dtype, async (file) => (existsSync(join(folder, file)) ? true : `missing from ${folder}`));
    // transformers.js wants an org/name id under a root: the folder's parent and the folder itself.
    loadFromLocalRoot(dirname(dirname(folder)));
    id = `${basename(dirname(folder))}/${basename(folder)}`;
    localFolder = folder;
    filesAt = () => folder;
  } else {
    env.allowLocalModels = false;
    env.allowRemoteModels = true;
    env.remoteHost = spec.remoteHost || DEFAULT_HUB_HOST;
  }
  let loaded;
  try {
    const tokenizer = await AutoTokenizer.from_pretrained(id);
    const model = await AutoModelForCausalLM.from_pretrained(id, { device: "cpu", dtype });
    loaded = { runtime: { Tensor, LogitsProcessor, StoppingCriteria, BaseStreamer }, model, tokenizer };
  } catch (e) {
    // A local folder's JSON files are checked after the fact, so that a parse error names its file.
    const local = localFolder;
    const badJson = local
      ? ["config.json", "generation_config.json", "tokenizer_config.json", "tokenizer.json"]
          .filter((file) => existsSync(join(local, file)))
          .map((file) => jsonProblem(file, readFileSync(join(local, file), "utf8")))
          .filter((p) => p !== null)
      : [];
    throw describeLoadError(source, e, { dtype, badJson });
  }
  if (!webgpu) return { ...loaded, gpuDevice: null, adapter: null as NodeWebGpuAdapter | null };
  const graph = readGraph(filesAt(), dtype);
  const { device, adapter } = await useWebGpuDecoder(loaded.model, graph.bytes, graph.externalData);
  return { ...loaded, gpuDevice: device, adapter };
}

/** The decoder's graph and its external data files (`model.onnx_data`, `model.onnx_data_1`, …), as read from `folder`. */
function readGraph(folder: string, dtype: Dtype): { bytes: Uint8Array; externalData: { path: string; data: Uint8Array }[] } {
  const file = join(folder, modelGraphFile(dtype));
  if (!existsSync(file)) throw new Error(`device 'webgpu' in Node: the decoder's graph is not at ${file}`);
  const dir = dirname(file);
  const externalData = readdirSync(dir)
    .filter((name) => name.startsWith(`${basename(file)}_data`))
    .sort()
    .map((name) => ({ path: name, data: new Uint8Array(readFileSync(join(dir, name))) }));
  return { bytes: new Uint8Array(readFileSync(file)), externalData };
}

function loadFromLocalRoot(root: string): void {
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = root.endsWith("/") ? root : `${root}/`;
}


