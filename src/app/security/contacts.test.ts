/**
 * Which hosts a scenario's run would contact (./contacts.ts): a link that reaches only the page's own origin runs at
 * once (the regression runner's links: built-in environments, this checkout's modules, the built-in models, scripted,
 * oracle and replay policies); any other is shown to the user first, host by host, and the set-up lists them beside Run.
 */

import { describe, expect, it } from "vitest";
import { parseScenario, type Scenario } from "../../scenario/schema.js";
import { scenarioContacts } from "./contacts.js";

const origin = "http://127.0.0.1:4173";
const base = { mode: "sync", max_seq_len: 64, max_rollout_turns: 1, dataset: { task_name: "t", size: 1, seed: 0 } };
const scenario = (envs: Record<string, unknown>, policy: unknown): Scenario => parseScenario({ ...base, dataset: { ...base.dataset, task_name: Object.keys(envs)[0] }, envs, policy });

describe("scenarioContacts", () => {
  it("nothing for built-in environments with the built-in models, scripted, oracle, replay and local models", () => {
    for (const policy of [
      { kind: "model", model: "builtin:tiny" },
      { kind: "model", model: "builtin:small", device: "wasm" },
      { kind: "model", model: "local:picked" },
      { kind: "scripted", responses: [["a"]] },
      { kind: "oracle", seed: 1 },
      { kind: "replay", file: "run.jsonl" },
    ]) {
      for (const env of ["sliding_puzzle", "calculator", "workspace"]) expect(scenarioContacts(scenario({ t: { env } }, policy), { origin })).toEqual([]);
    }
  });

  it("a remote environment's server, unless it is the page's own origin", () => {
    const remote = scenario({ t: { env: "http", config: { url: "http://localhost:8765/" } }, u: { env: "http", config: { url: `${origin}/env` } } }, { kind: "oracle" });
    expect(scenarioContacts(remote, { origin })).toEqual([{ host: "http://localhost:8765", what: "remote environment 't' (http://localhost:8765/): its dataset, every step and, after the run, its samples (for its metrics) are sent there" }]);
  });

  it("the hub for a hub model id: the default hub, or the hub address the page is set to", () => {
    const hub = scenario({ t: { env: "calculator" } }, { kind: "model", model: "onnx-community/Qwen2.5-0.5B-Instruct" });
    expect(scenarioContacts(hub, { origin })).toEqual([
      { host: "https://huggingface.co", what: "model 'onnx-community/Qwen2.5-0.5B-Instruct' from the hub at https://huggingface.co (and its file hosts)" },
    ]);
    expect(scenarioContacts(hub, { origin, hubAddress: "http://127.0.0.1:9000/" })).toEqual([
      { host: "http://127.0.0.1:9000", what: "model 'onnx-community/Qwen2.5-0.5B-Instruct' from the hub at http://127.0.0.1:9000/" },
    ]);
    // A mirror on the page's own origin contacts nothing else.
    expect(scenarioContacts(hub, { origin, hubAddress: `${origin}/hub/` })).toEqual([]);
  });

  it("a user environment module loaded from a URL; not this checkout's modules nor a picked file", () => {
    const userEnvironments = [
      { origin: "environments/number_guess.js", source: "checkout" as const, status: "ready" as const, description: { name: "number_guess" } },
      { origin: "picked.js", source: "file" as const, status: "ready" as const, description: { name: "picked" } },
      { origin: "https://envs.example/far.js", source: "url" as const, status: "ready" as const, description: { name: "far" } },
    ] as never;
    expect(scenarioContacts(scenario({ t: { env: "number_guess" } }, { kind: "oracle" }), { origin, userEnvironments })).toEqual([]);
    expect(scenarioContacts(scenario({ t: { env: "picked" } }, { kind: "oracle" }), { origin, userEnvironments })).toEqual([]);
    expect(scenarioContacts(scenario({ t: { env: "far" } }, { kind: "oracle" }), { origin, userEnvironments })).toEqual([
      { host: "https://envs.example", what: "environment module 'far' (task 't'), loaded from https://envs.example/far.js: it may make requests of its own" },
    ]);
  });

  it("a server policy's inference server, and the hub for its tokenizer when that is a hub id", () => {
    const served = scenario({ t: { env: "calculator" } }, { kind: "server", base_url: "http://10.0.0.5:8000/v1", model: "Qwen/Qwen3-0.6B" });
    expect(scenarioContacts(served, { origin })).toEqual([
      { host: "http://10.0.0.5:8000", what: "inference server (http://10.0.0.5:8000/v1): every prompt of the run, as token ids, is sent there for model 'Qwen/Qwen3-0.6B' to continue" },
      { host: "https://huggingface.co", what: "the tokenizer of 'Qwen/Qwen3-0.6B' from the hub at https://huggingface.co (and its file hosts)" },
    ]);
    // A built-in tokenizer comes from the page itself; a server on the page's own origin is no other host.
    const local = scenario({ t: { env: "calculator" } }, { kind: "server", base_url: `${origin}/v1`, model: "served", tokenizer: "builtin:tiny-qwen3" });
    expect(scenarioContacts(local, { origin })).toEqual([]);
    const stand = scenario({ t: { env: "calculator" } }, { kind: "server", base_url: "http://127.0.0.1:8000/v1", model: "builtin:small" });
    expect(scenarioContacts(stand, { origin }).map((c) => c.host)).toEqual(["http://127.0.0.1:8000"]);
  });

  it("the hub for the scenario's tokenizer when it is a hub id, with a scripted, oracle or replay policy", () => {
    for (const policy of [{ kind: "scripted", responses: [["a"]] }, { kind: "oracle", seed: 1 }, { kind: "replay", file: "run.jsonl" }]) {
      const hubTokenizer = { ...scenario({ t: { env: "calculator" } }, policy), tokenizer: "Qwen/Qwen3-0.6B" };
      expect(scenarioContacts(hubTokenizer, { origin })).toEqual([
        { host: "https://huggingface.co", what: "the tokenizer 'Qwen/Qwen3-0.6B' from the hub at https://huggingface.co (and its file hosts)" },
      ]);
      expect(scenarioContacts(hubTokenizer, { origin, hubAddress: "http://127.0.0.1:9000/" }).map((c) => c.host)).toEqual(["http://127.0.0.1:9000"]);
      // A built-in tokenizer comes from the page.
      expect(scenarioContacts({ ...hubTokenizer, tokenizer: "builtin:tiny-qwen3" }, { origin })).toEqual([]);
    }
  });

  it("every host, each once: a remote environment and a hub model together", () => {
    const both = scenario(
      { t: { env: "http", config: { url: "http://127.0.0.1:8765" } }, u: { env: "http", config: { url: "http://127.0.0.1:8765" } } },
      { kind: "model", model: "org/m" },
    );
    expect(scenarioContacts(both, { origin }).map((c) => c.host)).toEqual(["http://127.0.0.1:8765", "http://127.0.0.1:8765", "https://huggingface.co"]);
  });
});
