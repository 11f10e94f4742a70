/**
 * The Node entry of the model policy: transformers.js on onnxruntime-node (CPU). The built-in models are built on
 * demand (in about a second), so `npm run rollout` with `"policy": {"kind": "model", "model": "builtin:tiny"}`
 * works on a fresh clone after `npm ci` alone.
 */

import { existsSync, readFileSync, statSync } from "node:fs";
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
import { checkDtype, checkModelFiles, describeLoadError, jsonProblem, resolveModelSource, type Dtype } from "./model-source.js";

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
  const { runtime, model, tokenizer } = await loadNodeModel(spec);
  return new ModelPolicy(runtime, model, tokenizer, spec);
}

/** The loaded model, its tokenizer and the runtime classes (the benchmark compares against a bare `generate`). */
export async function loadNodeModel(spec: NodeModelSpec) {
  if (spec.device === "webgpu" || spec.device === "wasm") {
    throw new Error(`device '${spec.device}' runs in the browser; in Node the model runs on 'cpu'`);
  }
  const source = resolveModelSource(spec.model);
  const dtype = spec.dtype ?? "fp32";
  checkDtype(source, dtype, { device: "cpu", shaderF16: false });
  let id = source.id;
  let localFolder: string | null = null;
  if (source.kind === "builtin") {
    const root = spec.modelsRoot ?? DEFAULT_MODELS_ROOT;
    writeBuiltinFolder(root, source.preset);
    loadFromLocalRoot(root);
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
  } else {
    env.allowLocalModels = false;
    env.allowRemoteModels = true;
    if (spec.remoteHost) env.remoteHost = spec.remoteHost;
  }
  try {
    const tokenizer = await AutoTokenizer.from_pretrained(id);
    const model = await AutoModelForCausalLM.from_pretrained(id, { device: "cpu", dtype });
    return { runtime: { Tensor, LogitsProcessor, StoppingCriteria, BaseStreamer }, model, tokenizer };
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
}

function loadFromLocalRoot(root: string): void {
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = root.endsWith("/") ? root : `${root}/`;
}


