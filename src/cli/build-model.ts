/**
 * `npm run build:model [-- --preset trained|tiny|small|tiny-qwen3|all] [--out <root>] [--seed N] [--force] [--ort-out <dir>] [--no-ort]`
 *
 * Writes the built-in models in the hub layout transformers.js loads offline (`env.localModelPath = root`, id
 * `builtin/<name>`), by default to `public/models/builtin/{trained,tiny,small,tiny-qwen3}/`, and copies
 * onnxruntime-web's self-hosted wasm files to `public/ort/`. Both steps skip what is already up to date. Exit status
 * 2 on bad usage. `trained` is built from the committed weights file (`TRAINED_WEIGHTS_FILE`), or from `--weights
 * <file.safetensors>` (`npm run train:model` writes one; docs/training.md); the others from `--seed`. Exit status 1
 * on a bad weights file.
 */

import { LabError } from "../core/index.js";
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { checkSeed } from "../policy/builtin-model/build.js";
import { BUILTIN_MODEL_NAMES, isBuiltinModelName, type BuiltinModelName } from "../policy/builtin-model/presets.js";
import { WeightsFileError } from "../policy/builtin-model/weights-file.js";
import { TRAINED_WEIGHTS_FILE, writeBuiltinFolder, writeBuiltinModel, writeTrainedModel, type BuiltinWriteResult } from "../policy/builtin-model/write-folder.js";
import { isEntryPoint } from "./entry.js";

/** The project's root: the checkout, or the installed package's folder. */
const ROOT = resolve(import.meta.dirname, "../..");
export const PUBLIC_MODELS_DIR = join(ROOT, "public", "models");
export const PUBLIC_ORT_DIR = join(ROOT, "public", "ort");

const USAGE =
  "usage: npm run build:model -- [--preset trained|tiny|small|tiny-qwen3|all] [--out <root>] [--seed N] [--force] [--ort-out <dir>] [--no-ort]\n" +
  "       npm run build:model -- --preset trained [--weights <file.safetensors>] [--out <root>] [--force] [--no-ort]";

/**
 * The ORT files transformers.js 4.3.2's web build requests (`transformers.web.js`, `wasmPaths`): the asyncify build
 * (WASM and the native WebGPU EP), or the plain build on Safari < 26 without WebGPU. Its `onnxruntime-web/webgpu`
 * bundle never loads the `.jsep` or `.jspi` builds, so those 45 MB are not copied.
 */
const ORT_FILES = [
  "ort-wasm-simd-threaded.asyncify.mjs",
  "ort-wasm-simd-threaded.asyncify.wasm",
  "ort-wasm-simd-threaded.mjs",
  "ort-wasm-simd-threaded.wasm",
];

export interface Options {
  presets: BuiltinModelName[];
  /** The weights file `builtin/trained` is built from (default: the committed `TRAINED_WEIGHTS_FILE`). */
  weights?: string;
  out: string;
  seed: number;
  force: boolean;
  ortOut: string | null;
}

class UsageError extends LabError {
  override name = "UsageError";
  override readonly code = "usage";
}

function parseOptions(argv: string[]): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        preset: { type: "string", default: "all" },
        out: { type: "string", default: PUBLIC_MODELS_DIR },
        seed: { type: "string", default: "0" },
        force: { type: "boolean", default: false },
        "ort-out": { type: "string", default: PUBLIC_ORT_DIR },
        "no-ort": { type: "boolean", default: false },
        weights: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) throw new UsageError("");
  const preset = values.preset;
  const ortOut = values["no-ort"] ? null : values["ort-out"];
  if (values.weights !== undefined && preset !== "trained") throw new UsageError("--weights is for --preset trained only");
  if (preset !== "all" && !isBuiltinModelName(preset)) throw new UsageError(`unknown preset ${preset}`);
  const seed = Number(values.seed);
  try {
    checkSeed(seed);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return {
    presets: preset === "all" ? [...BUILTIN_MODEL_NAMES] : [preset],
    ...(values.weights === undefined ? {} : { weights: values.weights }),
    out: values.out,
    seed,
    force: values.force,
    ortOut,
  };
}

/** `<dir>/node_modules/<name>` for the nearest `dir` at or above `from` that has it (Node's own lookup order). */
function packageDir(name: string, from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(dir) === dir) throw new Error(`cannot find the npm package ${name} above ${from}`);
  }
}

/**
 * The onnxruntime-web transformers.js resolves: its own nested copy if npm nested one, else the hoisted one (in
 * the checkout's node_modules, or in the project that installed this package).
 */
function ortDistDir(): string {
  const transformers = packageDir("@huggingface/transformers", ROOT);
  const dir = packageDir("onnxruntime-web", transformers);
  const wanted = JSON.parse(readFileSync(join(transformers, "package.json"), "utf8")).dependencies?.[
    "onnxruntime-web"
  ];
  const found = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version;
  if (wanted && wanted !== found) console.warn(`! onnxruntime-web ${found} found, transformers.js pins ${wanted}`);
  return join(dir, "dist");
}

/** A path relative to the working directory when it lies below it, else absolute. */
function display(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") ? rel : path;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;

/** Copies a file unless the target has the same size and is not older than the source. */
function copyIfStale(from: string, to: string, force: boolean): boolean {
  const source = statSync(from);
  if (!force && existsSync(to)) {
    const target = statSync(to);
    if (target.size === source.size && target.mtimeMs >= source.mtimeMs) return false;
  }
  copyFileSync(from, to);
  return true;
}

function copyOrtFiles(outDir: string, force: boolean, report: Report): void {
  const dist = ortDistDir();
  mkdirSync(outDir, { recursive: true });
  for (const name of ORT_FILES) {
    const from = join(dist, name);
    if (!existsSync(from)) {
      console.warn(`! ${from} is missing; skipped`);
      continue;
    }
    const to = join(outDir, name);
    const copied = copyIfStale(from, to, force);
    report(`${copied ? "copied" : "up to date"} ${display(to)} (${mb(statSync(to).size)})`, !copied);
  }
}

export function main(argv: string[]): number {
  let options: Options;
  try {
    options = parseOptions(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (error.message) console.error(error.message);
    console.error(USAGE);
    return error.message ? 2 : 0;
  }
  try {
    buildModelAssets(options);
  } catch (error) {
    // A bad weights file is the user's input: its message names the file and the tensor; no stack.
    if (error instanceof WeightsFileError) {
      console.error(error.message);
      return 1;
    }
    // A folder that cannot be written (--out or --ort-out below a file, no permission, a full disk): named, no stack.
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code !== "string") throw error;
    console.error(`error: cannot write the model files: ${(error as Error).message}`);
    return 2;
  }
  return 0;
}

/** A line of what `buildModelAssets` did; `upToDate` when it left the thing as it was. */
export type Report = (line: string, upToDate: boolean) => void;

function reportWritten(result: BuiltinWriteResult, from: string, report: Report): void {
  const where = display(result.dir);
  if (!result.written) {
    report(`up to date ${where} (id ${result.id}, ${from}; --force rebuilds)`, true);
    return;
  }
  report(`built ${result.id} (${from}) in ${result.buildMs.toFixed(0)} ms:`, false);
  for (const file of result.files) report(`  wrote ${join(where, file.path)} (${file.bytes.toLocaleString("en-US")} B)`, false);
}

const DEFAULT_ASSETS: Options = { presets: [...BUILTIN_MODEL_NAMES], out: PUBLIC_MODELS_DIR, seed: 0, force: false, ortOut: PUBLIC_ORT_DIR };

/** Writes the presets' folders and copies the ORT files (what is up to date is skipped), reporting each (on stdout unless told). */
export function buildModelAssets(options: Options = DEFAULT_ASSETS, report: Report = (line) => console.log(line)): void {
  const root = resolve(options.out);
  for (const preset of options.presets) {
    if (preset === "trained" && options.weights !== undefined) {
      const weights = display(resolve(options.weights));
      reportWritten(writeTrainedModel(root, resolve(options.weights), options.force, weights), `weights ${weights}`, report);
    } else if (preset === "trained") reportWritten(writeBuiltinFolder(root, "trained", options.force), `weights ${display(TRAINED_WEIGHTS_FILE)}`, report);
    else reportWritten(writeBuiltinModel(root, preset, options.seed, options.force), `seed ${options.seed}`, report);
  }
  if (options.ortOut) copyOrtFiles(resolve(options.ortOut), options.force, report);
}

if (isEntryPoint(import.meta.url)) process.exitCode = main(process.argv.slice(2));
