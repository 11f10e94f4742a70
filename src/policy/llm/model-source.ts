/** Where a model comes from, which dtypes it can load with, and load errors that name the file and the reason. */

import { BUILTIN_MODEL_NAMES, isBuiltinModelName, type BuiltinModelName } from "../builtin-model/presets.js";

/**
 * The hub a hub id is loaded from when no other address is given (transformers.js's own default). Set every time, not
 * only when another is given: transformers.js's `env` outlives a load, and a worker must not keep an address the user
 * has since cleared.
 */
export const DEFAULT_HUB_HOST = "https://huggingface.co/";

/** transformers.js's dtypes that name a graph file (its `auto` does not: it picks one per device). */
export type Dtype = "fp32" | "fp16" | "q8" | "int8" | "uint8" | "q4" | "bnb4" | "q4f16" | "q2" | "q2f16" | "q1" | "q1f16";
export const DTYPES: readonly Dtype[] = ["fp32", "fp16", "q8", "int8", "uint8", "q4", "bnb4", "q4f16", "q2", "q2f16", "q1", "q1f16"];

/** fp16 and the q…f16 dtypes compute in half precision: on WebGPU they need the adapter's `shader-f16`. */
export const needsShaderF16 = (dtype: Dtype): boolean => dtype === "fp16" || /^q\df16$/.test(dtype);

export type ModelSource =
  | { kind: "builtin"; id: string; preset: BuiltinModelName; spec: string }
  | { kind: "hub"; id: string; spec: string }
  /** A folder the user picked in the browser, or a local path in Node. */
  | { kind: "local"; id: string; path: string; spec: string };

const HUB_ID = /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/;

/** A model id that names no model the lab knows (an unknown built-in): the scenario's mistake, not the loader's. */
export class UnknownModelError extends Error {
  override name = "UnknownModelError";
}

/**
 * `builtin:trained` / `builtin:tiny` / `builtin:small` / `builtin:tiny-qwen3`; `local:<name>` (a folder picked in the browser); an `org/name` hub id; any
 * other string is a local folder path (Node).
 */
export function resolveModelSource(spec: string): ModelSource {
  if (spec.startsWith("builtin:")) {
    const preset = spec.slice("builtin:".length);
    if (isBuiltinModelName(preset)) return { kind: "builtin", id: `builtin/${preset}`, preset, spec };
    throw new UnknownModelError(`unknown built-in model '${spec}' (expected ${BUILTIN_MODEL_NAMES.map((p) => `builtin:${p}`).join(", ")})`);
  }
  if (spec.startsWith("local:")) {
    const name = spec.slice("local:".length).replace(/[^\w.-]/g, "_") || "model";
    return { kind: "local", id: `local/${name}`, path: name, spec };
  }
  if (HUB_ID.test(spec)) return { kind: "hub", id: spec, spec };
  return { kind: "local", id: spec, path: spec, spec };
}

/** The checks a load would otherwise fail late and obscurely on. */
export function checkDtype(source: ModelSource, dtype: Dtype, device: { device: string; shaderF16: boolean }): void {
  if (!DTYPES.includes(dtype)) throw new Error(`unknown dtype '${dtype}' (expected one of ${DTYPES.join(", ")})`);
  if (source.kind === "builtin" && dtype !== "fp32") {
    throw new Error(`the built-in models ship fp32 weights only; '${dtype}' is not available for ${source.spec}`);
  }
  if (device.device === "webgpu" && needsShaderF16(dtype) && !device.shaderF16) {
    throw new Error(`dtype '${dtype}' needs the WebGPU feature 'shader-f16', which this adapter does not have; use fp32, q4 or WASM`);
  }
}

/** Why a model's JSON file does not parse (null when it does). */
export function jsonProblem(file: string, text: string): { file: string; reason: string } | null {
  try {
    JSON.parse(text);
    return null;
  } catch (e) {
    return { file, reason: (e as Error).message };
  }
}

/** What the loader knows about a failed load beyond the error itself. */
export interface LoadErrorContext {
  dtype?: Dtype;
  /** JSON files of the model that did not parse, with the parser's words (the loader checks each one it reads). */
  badJson?: { file: string; reason: string }[];
}

/**
 * Wraps a load failure so that it names the model, the file and the reason: a file the message names; a JSON file
 * that did not parse (transformers.js's own message names none); config.json for a model type transformers.js does
 * not know; the ONNX graph of the dtype for a session that onnxruntime cannot create (a truncated or corrupt file).
 */
export function describeLoadError(source: ModelSource, error: unknown, context: LoadErrorContext = {}): Error {
  const message = error instanceof Error ? error.message : String(error);
  if (message.startsWith(`could not load model '${source.spec}'`)) return error as Error;
  const fail = (file: string | undefined, reason: string) =>
    new Error(`could not load model '${source.spec}'${file ? ` (file ${file})` : ""}: ${reason}`);
  const bad = context.badJson?.[0];
  if (bad && (error instanceof SyntaxError || /JSON/.test(message))) return fail(bad.file, `not valid JSON: ${bad.reason}`);
  const named = /([\w.-]+\.(?:json|onnx|onnx_data))/.exec(message)?.[1];
  if (named) return fail(named, message);
  if (/Unsupported model type|model_type/i.test(message)) {
    return fail("config.json", `${message} (its model_type is not one transformers.js can load as a causal LM)`);
  }
  if (/Can't create a session|protobuf|Failed to load model|invalid model|ONNX/i.test(message)) {
    const graph = modelGraphFile(context.dtype ?? "fp32");
    return fail(graph, `onnxruntime cannot load it (a truncated or corrupt file?): ${message}`);
  }
  return fail(undefined, message);
}

// transformers.js's file suffixes (its DEFAULT_DTYPE_SUFFIX_MAPPING).
const DTYPE_SUFFIX: Record<Dtype, string> = {
  fp32: "",
  fp16: "_fp16",
  q8: "_quantized",
  int8: "_int8",
  uint8: "_uint8",
  q4: "_q4",
  bnb4: "_bnb4",
  q4f16: "_q4f16",
  q2: "_q2",
  q2f16: "_q2f16",
  q1: "_q1",
  q1f16: "_q1f16",
};

/** The decoder's ONNX graph for this dtype, relative to the model folder. */
export const modelGraphFile = (dtype: Dtype) => `onnx/model${DTYPE_SUFFIX[dtype]}.onnx`;

/** The files a causal LM folder must have for transformers.js to load it with this dtype. */
export function requiredModelFiles(dtype: Dtype): string[] {
  return ["config.json", "tokenizer_config.json", "tokenizer.json", modelGraphFile(dtype)];
}

/**
 * Checks that each required file is there before transformers.js tries (its own errors for a missing tokenizer
 * file are obscure). `exists` answers for one relative path: true, or why not.
 */
export async function checkModelFiles(
  source: ModelSource,
  dtype: Dtype,
  exists: (path: string) => Promise<true | string>,
): Promise<void> {
  for (const file of requiredModelFiles(dtype)) {
    const found = await exists(file);
    if (found !== true) throw new Error(`could not load model '${source.spec}' (file ${file}): ${found}`);
  }
}
