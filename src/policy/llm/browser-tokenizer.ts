/**
 * The page's (a Worker's) tokenizer for the text policies, the one a scenario's `tokenizer` key names
 * (scripted, oracle, replay, human): the Node counterpart is `loadPolicyTokenizer` (./tokenizer-load.ts). A built-in
 * model's tokenizer is read from the site's models folder (`npm run build:model` writes `builtin/tiny-qwen3/`), a
 * hub id's from the hub (or `remoteHost`); a local folder is not read here (the page has no paths: pick the folder
 * as a model, or run the scenario headless). Loaded once per spec.
 */

import { AutoTokenizer, env } from "@huggingface/transformers";
import { byteLevelTokenizer, type TokenizerInterface } from "../../core/index.js";
import { BYTE_LEVEL_SPECS } from "../builtin-model/presets.js";
import { ModelTokenizer } from "./model-policy.js";
import { DEFAULT_HUB_HOST, resolveModelSource } from "./model-source.js";

export interface BrowserTokenizerSpec {
  /** The scenario's `tokenizer`: `builtin:tiny-qwen3`, a hub id, or a byte-level built-in. */
  tokenizer: string;
  /** Where the site serves its built-in models (default `/models/`). */
  modelsPath?: string;
  /** A stand-in hub instead of huggingface.co (tests). */
  remoteHost?: string;
}

const loading = new Map<string, Promise<TokenizerInterface>>();
/** The tokenizers loaded so far, by the spec that named them (the token view and check of the run that used one). */
const loaded = new Map<string, ModelTokenizer>();

/** The Hugging Face tokenizer `spec` names, if a run in this worker has loaded it. */
export function loadedPolicyTokenizer(spec: string): ModelTokenizer["hf"] | null {
  return loaded.get(spec)?.hf ?? null;
}

export function browserPolicyTokenizer(spec: BrowserTokenizerSpec): Promise<TokenizerInterface> {
  if (BYTE_LEVEL_SPECS.includes(spec.tokenizer)) return Promise.resolve(byteLevelTokenizer);
  const key = JSON.stringify([spec.tokenizer, spec.modelsPath ?? "", spec.remoteHost ?? ""]);
  let tokenizer = loading.get(key);
  if (!tokenizer) {
    tokenizer = load(spec);
    loading.set(key, tokenizer);
    tokenizer.catch(() => loading.delete(key));
  }
  return tokenizer;
}

async function load(spec: BrowserTokenizerSpec): Promise<TokenizerInterface> {
  const source = resolveModelSource(spec.tokenizer);
  if (source.kind === "local") {
    throw new Error(
      `tokenizer '${spec.tokenizer}': the page does not read local folders for a tokenizer (builtin:tiny-qwen3 or a hub id here; a folder with npm run rollout)`,
    );
  }
  if (source.kind === "builtin") {
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    // A path, not a URL: transformers.js skips tokenizer discovery for URL-looking locations.
    env.localModelPath = spec.modelsPath ?? "/models/";
  } else {
    env.allowLocalModels = false;
    env.allowRemoteModels = true;
    env.remoteHost = spec.remoteHost || DEFAULT_HUB_HOST;
  }
  env.fetch = fetch.bind(globalThis);
  let hf: Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>;
  try {
    hf = await AutoTokenizer.from_pretrained(source.id);
  } catch (e) {
    const from = source.kind === "hub" ? ` from the hub (${spec.remoteHost || DEFAULT_HUB_HOST})` : "";
    throw new Error(`tokenizer '${spec.tokenizer}': could not load it${from}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!hf.chat_template) throw new Error(`tokenizer '${spec.tokenizer}': its tokenizer_config.json has no chat_template`);
  const tokenizer = new ModelTokenizer(hf);
  loaded.set(spec.tokenizer, tokenizer);
  return tokenizer;
}
