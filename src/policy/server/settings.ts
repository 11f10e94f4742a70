/**
 * The `server` policy's settings, in the scenario's own words (docs/scenarios.md, "Policies"; docs/model-policy.md,
 * "Inference servers"): the scenario schema checks them, this folder uses them.
 */

export interface ServerPolicySettings {
  /** The server's OpenAI-compatible API root, e.g. `http://127.0.0.1:8000/v1`: requests go to `<base_url>/completions`. */
  base_url: string;
  /** The model name the server serves (sent as `model`). */
  model: string;
  /** The model id whose tokenizer tokenizes the prompts; default: `model`. */
  tokenizer?: string;
  /** The most requests in flight at once, for everything that uses the policy. */
  max_concurrency?: number;
  /** Each request's deadline, in ms. */
  timeout_ms?: number;
  /** How many times a request is tried again after a 429, a 5xx or a network failure. */
  max_retries?: number;
  temperature?: number;
  /** 0 = no top-k cut (sent as -1, the servers' word for it). */
  top_k?: number;
  top_p?: number;
  seed?: number;
  /** The environment variable (Node) that holds the API key sent as `Authorization: Bearer …`; never the key itself. */
  api_key_env?: string;
}

export const SERVER_DEFAULTS = {
  max_concurrency: 8,
  timeout_ms: 120_000,
  max_retries: 4,
} as const;

/** `<base_url>/completions`, with the base URL's trailing slashes dropped. */
export function completionsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/completions`;
}
