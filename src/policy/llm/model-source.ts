/** Where a model comes from, which dtypes it can load with, and load errors that name the file and the reason. */

export type Dtype = "fp32" | "fp16" | "q8" | "q4" | "q4f16";
export const DTYPES: readonly Dtype[] = ["fp32", "fp16", "q8", "q4", "q4f16"];

export type ModelSource =
  | { kind: "builtin"; id: string; preset: "tiny" | "small"; spec: string }
  | { kind: "hub"; id: string; spec: string }
  /** A folder the user picked in the browser, or a local path in Node. */
  | { kind: "local"; id: string; path: string; spec: string };

const HUB_ID = /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/;

/**
 * `builtin:tiny` / `builtin:small`; `local:<name>` (a folder picked in the browser); an `org/name` hub id; any
 * other string is a local folder path (Node).
 */
export function resolveModelSource(spec: string): ModelSource {
  const builtin = /^builtin:(tiny|small)$/.exec(spec);
  if (builtin) return { kind: "builtin", id: `builtin/${builtin[1]}`, preset: builtin[1] as "tiny" | "small", spec };
  if (spec.startsWith("builtin:")) throw new Error(`unknown built-in model '${spec}' (expected builtin:tiny or builtin:small)`);
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
  if (device.device === "webgpu" && (dtype === "fp16" || dtype === "q4f16") && !device.shaderF16) {
    throw new Error(`dtype '${dtype}' needs the WebGPU feature 'shader-f16', which this adapter does not have; use fp32, q4 or WASM`);
  }
}

/** Wraps a load failure so that it names the model, the file when the message has one, and the reason. */
export function describeLoadError(source: ModelSource, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  if (message.startsWith(`could not load model '${source.spec}'`)) return error as Error;
  const file = /([\w.-]+\.(?:json|onnx|onnx_data))/.exec(message)?.[1];
  return new Error(`could not load model '${source.spec}'${file ? ` (file ${file})` : ""}: ${message}`);
}

const DTYPE_SUFFIX: Record<Dtype, string> = { fp32: "", fp16: "_fp16", q8: "_quantized", q4: "_q4", q4f16: "_q4f16" };

/** The files a causal LM folder must have for transformers.js to load it with this dtype. */
export function requiredModelFiles(dtype: Dtype): string[] {
  return ["config.json", "tokenizer_config.json", "tokenizer.json", `onnx/model${DTYPE_SUFFIX[dtype]}.onnx`];
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
