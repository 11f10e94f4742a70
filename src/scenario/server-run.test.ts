/**
 * A scenario whose policy is an inference server (`kind: "server"`), run against the stand-in server in this
 * process: the same tokens, texts and (within 1e-4) log-probabilities as the same model run in-process by the model
 * policy, in both rollout modes.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeServerPolicy } from "../cli/node-run.js";
import { startStandInServer, type StandInServer } from "../cli/stand-in-server.js";
import { loadNodeModelPolicy } from "../policy/llm/node.js";
import { runScenario, type LoadedPolicy, type RunScenarioOptions } from "./run.js";
import { parseScenario, type Scenario } from "./schema.js";

let server: StandInServer;
beforeAll(async () => {
  server = await startStandInServer({ model: "builtin:tiny" });
});
afterAll(() => server.close());

const modelPolicy = async (spec: Parameters<typeof loadNodeModelPolicy>[0]): Promise<LoadedPolicy> => {
  const policy = await loadNodeModelPolicy(spec);
  return { generation: policy, tokenizer: policy.tokenizer, dispose: () => policy.dispose() };
};
const options: RunScenarioOptions = { modelPolicy, serverPolicy: (spec) => nodeServerPolicy(spec) };

const puzzle = (mode: "sync" | "async", policy: Record<string, unknown>, extra: Record<string, unknown> = {}): Scenario =>
  parseScenario({
    mode,
    max_seq_len: 1024,
    max_rollout_turns: 2,
    max_new_tokens: 12,
    greedy: true,
    envs: { puzzle: { env: "sliding_puzzle", config: {} } },
    dataset: { task_name: "puzzle", size: 3, seed: 1, config: { size: 3, shuffle_moves: 6, max_moves: 10 } },
    policy,
    ...extra,
  });

const assistantTurns = (result: Awaited<ReturnType<typeof runScenario>>) =>
  result.samples.map((s) => s.message_log.filter((m) => m.role === "assistant"));

describe("the server policy against the stand-in server", () => {
  for (const mode of ["sync", "async"] as const) {
    it(`${mode}, greedy: the model policy's tokens, texts and log-probabilities`, async () => {
      const viaServer = await runScenario(puzzle(mode, { kind: "server", base_url: server.url, model: "builtin:tiny" }), options);
      const inProcess = await runScenario(puzzle(mode, { kind: "model", model: "builtin:tiny" }), options);
      const ours = assistantTurns(viaServer);
      const theirs = assistantTurns(inProcess);
      expect(ours.map((turns) => turns.map((m) => m.token_ids))).toEqual(theirs.map((turns) => turns.map((m) => m.token_ids)));
      expect(ours.map((turns) => turns.map((m) => m.content))).toEqual(theirs.map((turns) => turns.map((m) => m.content)));
      expect(ours.flat().length).toBeGreaterThanOrEqual(3);
      ours.flat().forEach((m, i) => {
        const expected = theirs.flat()[i]!.generation_logprobs!;
        expect(m.generation_logprobs).toHaveLength(expected.length);
        m.generation_logprobs!.forEach((lp, j) => expect(Math.abs(lp - expected[j]!)).toBeLessThan(1e-4));
      });
      expect(viaServer.samples.map((s) => s.termination)).toEqual(inProcess.samples.map((s) => s.termination));
      expect(viaServer.metrics["lab/server_requests"]).toBe(ours.flat().length);
      expect(viaServer.metrics["lab/server_retries"]).toBe(0);
    });
  }

  it("seeded sampling: the same tokens whatever the mode, the order or the concurrency (seeds per sample and turn)", async () => {
    const policy = { kind: "server", base_url: server.url, model: "builtin:tiny", temperature: 1, top_p: 0.95, seed: 3 };
    const sync = await runScenario(puzzle("sync", policy, { greedy: false }), options);
    const oneAtATime = await runScenario(puzzle("sync", { ...policy, max_concurrency: 1 }, { greedy: false }), options);
    const async_ = await runScenario(puzzle("async", policy, { greedy: false }), options);
    const ids = (r: typeof sync) => assistantTurns(r).map((turns) => turns.map((m) => m.token_ids));
    expect(ids(oneAtATime)).toEqual(ids(sync));
    // The async rollout ends a sample whose response hit its token limit (D3), the sync one goes on: the turns both had agree.
    ids(async_).forEach((turns, sample) => expect(turns).toEqual(ids(sync)[sample]!.slice(0, turns.length)));
    // Another seed draws other tokens.
    const other = await runScenario(puzzle("sync", { ...policy, seed: 4 }, { greedy: false }), options);
    expect(ids(other)).not.toEqual(ids(sync));
  });

  it("a runner without a server backend says so", async () => {
    await expect(runScenario(puzzle("sync", { kind: "server", base_url: server.url, model: "builtin:tiny" }), {})).rejects.toThrow(
      "policy.kind: this runner has no inference-server backend for policy kind 'server'",
    );
  });

  it("an API key from the environment variable api_key_env names; none set is an error naming it", async () => {
    const keyed = await startStandInServer({ model: "builtin:tiny", apiKey: "s3cret" });
    try {
      const spec = puzzle("sync", { kind: "server", base_url: keyed.url, model: "builtin:tiny", api_key_env: "LAB_TEST_KEY" }).policy as Parameters<typeof nodeServerPolicy>[0];
      await expect(nodeServerPolicy(spec, undefined, {})).rejects.toThrow("policy.api_key_env: the environment variable LAB_TEST_KEY is not set");
      const result = await runScenario(puzzle("sync", spec), { serverPolicy: (s) => nodeServerPolicy(s, undefined, { LAB_TEST_KEY: "s3cret" }) });
      expect(result.samples.every((s) => s.error === undefined || s.error === null)).toBe(true);
      expect(keyed.stats.answers.every((a) => a === 200)).toBe(true);
      const wrong = await runScenario(puzzle("sync", spec), { serverPolicy: (s) => nodeServerPolicy(s, undefined, { LAB_TEST_KEY: "nope" }) });
      expect(wrong.samples[0]!.termination).toBe("error");
      expect(JSON.stringify(wrong.samples[0])).toContain(`${keyed.url}/completions answered HTTP 401`);
    } finally {
      await keyed.close();
    }
  });
});
