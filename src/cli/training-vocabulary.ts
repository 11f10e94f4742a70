/**
 * The vocabulary the training commands tokenize with (docs/training.md): a vocabulary file (`train:vocab`'s) or a
 * trained weights file (its `vocabulary` metadata), what `data.json` records of it, and the transformers.js
 * tokenizer of its merges. No merges: the byte-level vocabulary and the core's tokenizer.
 */

import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { byteLevelTokenizer, type TokenizerInterface } from "../core/index.js";
import { VOCAB_SIZE } from "../core/tokenizer/byte-level.js";
import { allowedTokenIds } from "../policy/builtin-model/logit-shaping.js";
import { MergesError, parseMerges, type Merge } from "../policy/builtin-model/merges.js";
import { tokenizerConfigJson, tokenizerJson } from "../policy/builtin-model/tokenizer-files.js";
import { parseWeightsFile, WeightsFileError } from "../policy/builtin-model/weights-file.js";
import { loadPolicyTokenizer } from "../policy/llm/tokenizer-load.js";

export const VOCABULARY_FORMAT = "rollout-lab-vocabulary/1";

export interface Vocabulary {
  merges: Merge[];
  /** SHA-256 of the merges' JSON: which vocabulary a data set or a weights file speaks, in one word. */
  sha256: string;
}

export const vocabularyOf = (merges: Merge[]): Vocabulary => ({ merges, sha256: createHash("sha256").update(JSON.stringify(merges)).digest("hex") });

/**
 * The merges of a vocabulary file (`train:vocab`'s) or of a trained weights file (`.safetensors`, its metadata).
 * Throws a RangeError (bad usage, exit status 2) naming the file and what is wrong with it.
 */
export function readVocabulary(path: string): Vocabulary {
  if (!existsSync(path)) throw new RangeError(`--vocabulary: ${path} does not exist (npm run train:vocab writes one)`);
  try {
    return vocabularyOf(path.endsWith(".safetensors") ? weightsFileMerges(path) : vocabularyFileMerges(path));
  } catch (e) {
    if (e instanceof MergesError || e instanceof WeightsFileError) throw new RangeError(`--vocabulary: ${e.message}`);
    throw e;
  }
}

function weightsFileMerges(path: string): Merge[] {
  const bytes = readFileSync(path);
  return parseWeightsFile(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), path).merges;
}

function vocabularyFileMerges(path: string): Merge[] {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new RangeError(`${path}: not a vocabulary file: ${(e as Error).message}`);
  }
  const record = value as { format?: unknown; merges?: unknown };
  if (record?.format !== VOCABULARY_FORMAT) throw new RangeError(`${path}: format: expected "${VOCABULARY_FORMAT}", got ${JSON.stringify(record?.format)}`);
  return parseMerges(record.merges, `${path}: merges`);
}

/** What `data.json` records of the vocabulary its ids are in: the trainer sizes the model and its shaping from it. */
export function vocabularyManifest(v: Vocabulary): Record<string, unknown> {
  return { size: VOCAB_SIZE + v.merges.length, sha256: v.sha256, allowed_ids: allowedTokenIds(v.merges), merges: v.merges };
}

/** The transformers.js tokenizer of the merges (their tokenizer files, as a trained model's folder holds them). */
export async function vocabularyTokenizer(v: Vocabulary): Promise<TokenizerInterface> {
  if (v.merges.length === 0) return byteLevelTokenizer;
  const dir = mkdtempSync(join(tmpdir(), "vocabulary-"));
  try {
    writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(tokenizerJson(v.merges)));
    writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify(tokenizerConfigJson()));
    return await loadPolicyTokenizer(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The vocabulary of a model folder's tokenizer.json (a built trained model's, or a byte-level preset's: no merges);
 * null when the folder has none that this project built (another model's tokenizer).
 */
export function folderVocabulary(folder: string): Vocabulary | null {
  const path = join(folder, "tokenizer.json");
  if (!existsSync(path)) return null;
  const json = JSON.parse(readFileSync(path, "utf8")) as { model?: { merges?: unknown[] } };
  const merges = json.model?.merges;
  if (!Array.isArray(merges)) return null;
  const pairs = merges.map((m) => (typeof m === "string" ? m.split(" ") : m));
  try {
    return vocabularyOf(parseMerges(pairs, path));
  } catch {
    return null;
  }
}
