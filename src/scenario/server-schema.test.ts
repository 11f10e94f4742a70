/** The `server` policy in the scenario schema: what it takes, and each mistake named with its field. */

import { describe, expect, it } from "vitest";
import { parseScenario, ScenarioError } from "./schema.js";

const base = {
  mode: "sync",
  max_seq_len: 256,
  max_rollout_turns: 2,
  envs: { t: { env: "calculator", config: {} } },
  samples: [{ task_name: "t", message_log: [{ role: "user", content: "hi" }] }],
};
const server = { kind: "server", base_url: "http://127.0.0.1:8000/v1", model: "Qwen/Qwen3-0.6B" };

function problemsOf(value: unknown): string[] {
  try {
    parseScenario(value);
  } catch (e) {
    if (e instanceof ScenarioError) return e.problems;
    throw e;
  }
  return [];
}
const withPolicy = (policy: Record<string, unknown>, extra: Record<string, unknown> = {}) => problemsOf({ ...base, policy, ...extra });

describe("the server policy's schema", () => {
  it("takes base_url and model, and every optional setting", () => {
    const full = {
      ...server,
      tokenizer: "Qwen/Qwen3-0.6B",
      max_concurrency: 16,
      timeout_ms: 600_000,
      max_retries: 0,
      temperature: 0.7,
      top_k: 20,
      top_p: 0.8,
      seed: 3,
      api_key_env: "VLLM_API_KEY",
    };
    expect(parseScenario({ ...base, policy: full }).policy).toEqual(full);
    expect(parseScenario({ ...base, policy: server }).policy).toEqual(server);
  });

  it("names each wrong field and what it expects", () => {
    expect(withPolicy({ ...server, base_url: "ftp://host/v1" })).toEqual([
      "policy.base_url: expected an http(s) URL, e.g. http://127.0.0.1:8000/v1 (requests go to <base_url>/completions)",
    ]);
    expect(withPolicy({ ...server, base_url: "localhost:8000" })[0]).toMatch(/^policy\.base_url: expected an http\(s\) URL/);
    expect(withPolicy({ kind: "server", model: "m" })).toEqual(["policy.base_url: expected the server's API URL, e.g. http://127.0.0.1:8000/v1"]);
    expect(withPolicy({ ...server, model: "" })).toEqual(["policy.model: expected the model name the server serves"]);
    expect(withPolicy({ ...server, max_concurrency: 0 })).toEqual(["policy.max_concurrency: expected a positive integer"]);
    expect(withPolicy({ ...server, max_concurrency: 5000 })).toEqual(["policy.max_concurrency: expected at most 1024 requests in flight"]);
    expect(withPolicy({ ...server, timeout_ms: 2 ** 31 })[0]).toMatch(/^policy\.timeout_ms: expected at most 2147483647 ms/);
    expect(withPolicy({ ...server, max_retries: -1 })).toEqual(["policy.max_retries: expected an integer ≥ 0"]);
    expect(withPolicy({ ...server, top_p: 0 })).toEqual(["policy.top_p: expected a number in (0, 1]"]);
    expect(withPolicy({ ...server, api_key_env: "sk-abc123" })).toEqual([
      "policy.api_key_env: expected the name of an environment variable (letters, digits, _), not the key itself",
    ]);
    expect(withPolicy({ ...server, api_key: "sk-abc123" })).toEqual(["policy.api_key: unknown key (expected one of: kind, base_url, model, tokenizer, max_concurrency, timeout_ms, max_retries, temperature, top_k, top_p, seed, api_key_env)"]);
    expect(withPolicy({ kind: "vllm" })).toEqual(["policy.kind: expected scripted, oracle, replay, model or server"]);
  });

  it("a scenario tokenizer must be the server policy's own", () => {
    expect(withPolicy(server, { tokenizer: "Qwen/Qwen3-0.6B" })).toEqual([]);
    expect(withPolicy({ ...server, tokenizer: "builtin:tiny-qwen3" }, { tokenizer: "builtin:tiny-qwen3" })).toEqual([]);
    expect(withPolicy(server, { tokenizer: "builtin:tiny-qwen3" })).toEqual([
      "tokenizer: 'builtin:tiny-qwen3' is not the server policy's tokenizer 'Qwen/Qwen3-0.6B': a server policy uses its own (policy.tokenizer, else policy.model); drop tokenizer, or name the same",
    ]);
  });
});
