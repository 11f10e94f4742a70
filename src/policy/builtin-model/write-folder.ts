/**
 * Node-only: writes a built model folder in the hub layout transformers.js reads with `env.localModelPath = root`
 * and the id `org/name`, i.e. `<root>/<org>/<name>/…`. Kept out of `index.ts` so the browser bundle never sees
 * `node:fs`.
 */

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { buildModelFiles, builtinModelId, modelFilePaths, modelStamp, STAMP_FILE, type ModelFiles } from "./build.js";
import { BUILDER_VERSION } from "./decoder-graph.js";
import { PRESETS, type BuiltinModelName, type PresetName } from "./presets.js";
import { readQwen3TokenizerFiles } from "./qwen3-package.js";
import { buildTrainedModelFiles, TRAINED_MODEL_FILE_PATHS, type WeightsSource } from "./trained-model.js";
import { WeightsFileError } from "./weights-file.js";

export interface WrittenFile {
  path: string;
  bytes: number;
}

export interface BuiltinWriteResult {
  id: string;
  dir: string;
  /** False when the folder already held this preset, seed and builder version. */
  written: boolean;
  files: WrittenFile[];
  buildMs: number;
}

/** `<root>/<org>/<name>` for an `org/name` id. */
export function modelFolder(root: string, id: string): string {
  const parts = id.split("/");
  if (parts.length !== 2 || parts.some((p) => !p || p === "." || p === "..")) throw new Error(`model id must be org/name: ${id}`);
  return join(root, ...parts);
}

/** Writes every file under the folder; the stamp (if any) is removed first and written last. */
export function writeModelFolder(root: string, id: string, files: ModelFiles): WrittenFile[] {
  const dir = modelFolder(root, id);
  rmSync(join(dir, STAMP_FILE), { force: true });
  const ordered = [...files.keys()].sort((a, b) => Number(a === STAMP_FILE) - Number(b === STAMP_FILE));
  return ordered.map((path) => {
    const contents = files.get(path)!;
    const target = join(dir, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, contents);
    return { path, bytes: typeof contents === "string" ? Buffer.byteLength(contents) : contents.byteLength };
  });
}

/** True when the folder's stamp equals this build's and every file is there. */
export function isBuiltinUpToDate(dir: string, preset: PresetName, seed: number): boolean {
  const stampPath = join(dir, STAMP_FILE);
  if (!existsSync(stampPath) || readFileSync(stampPath, "utf8") !== modelStamp(preset, seed)) return false;
  return modelFilePaths(preset).every((f) => existsSync(join(dir, f)));
}

/** Builds and writes `<root>/builtin/<preset>/` unless it is already up to date (or `force`). */
export function writeBuiltinModel(root: string, preset: PresetName, seed = 0, force = false): BuiltinWriteResult {
  const id = builtinModelId(preset);
  const dir = modelFolder(root, id);
  if (!force && isBuiltinUpToDate(dir, preset, seed)) return { id, dir, written: false, files: [], buildMs: 0 };
  const start = performance.now();
  const files = buildModelFiles(preset, seed, PRESETS[preset].vocabulary === "qwen3" ? readQwen3TokenizerFiles() : undefined);
  const buildMs = performance.now() - start;
  return { id, dir, written: true, files: writeModelFolder(root, id, files), buildMs };
}

/** The id the trained preset loads by (`builtin:trained`). */
export const TRAINED_MODEL_ID = "builtin/trained";

/**
 * Builds and writes `<root>/builtin/trained/` from a weights file unless the folder already holds that file's
 * build (its stamp names the file's SHA-256). `name` is how the README names the file (default: its base name).
 */
export function writeTrainedModel(root: string, weightsPath: string, force = false, name = basename(weightsPath)): BuiltinWriteResult {
  const dir = modelFolder(root, TRAINED_MODEL_ID);
  let bytes: Buffer;
  try {
    bytes = readFileSync(weightsPath);
  } catch (e) {
    throw new WeightsFileError(`${weightsPath}: cannot read the weights file: ${(e as Error).message}`);
  }
  const source: WeightsSource = { sha256: createHash("sha256").update(bytes).digest("hex"), name };
  const stampPath = join(dir, STAMP_FILE);
  // The stamp's architecture comes from the file, so the file's hash and the builder's version decide.
  const stamp = existsSync(stampPath) ? (JSON.parse(readFileSync(stampPath, "utf8")) as { version?: string; weights?: WeightsSource }) : null;
  const upToDate =
    stamp?.version === BUILDER_VERSION &&
    stamp.weights?.sha256 === source.sha256 &&
    stamp.weights.name === name &&
    TRAINED_MODEL_FILE_PATHS.every((f) => existsSync(join(dir, f)));
  if (!force && upToDate) return { id: TRAINED_MODEL_ID, dir, written: false, files: [], buildMs: 0 };
  const start = performance.now();
  const files = buildTrainedModelFiles(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), source);
  const buildMs = performance.now() - start;
  return { id: TRAINED_MODEL_ID, dir, written: true, files: writeModelFolder(root, TRAINED_MODEL_ID, files), buildMs };
}

/**
 * builtin:trained's weights, committed to the repository (docs/training.md: `npm run train:model` wrote them; its
 * summary is `trained.train.json` beside them).
 */
export const TRAINED_WEIGHTS_FILE = join(import.meta.dirname, "weights", "trained.safetensors");
/** The run's summary (`train.json` of `python3 -m training.train`): steps, speeds, held-out losses, the data's seeds. */
export const TRAINED_SUMMARY_FILE = join(import.meta.dirname, "weights", "trained.train.json");

/** How the trained model's README names the committed file: its path in the repository. */
const TRAINED_WEIGHTS_NAME = relative(join(import.meta.dirname, "..", "..", ".."), TRAINED_WEIGHTS_FILE).split("\\").join("/");

/** Builds `<root>/builtin/<name>/` unless it is up to date: a seeded preset, or builtin:trained from the committed file. */
export function writeBuiltinFolder(root: string, name: BuiltinModelName, force = false): BuiltinWriteResult {
  return name === "trained" ? writeTrainedModel(root, TRAINED_WEIGHTS_FILE, force, TRAINED_WEIGHTS_NAME) : writeBuiltinModel(root, name, 0, force);
}
