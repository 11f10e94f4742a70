import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadNodeModelPolicy } from "../policy/llm/node.js";
import { withoutTiming } from "./result.js";
import { runScenario, type LoadedPolicy } from "./run.js";
import { parseScenario } from "./schema.js";

const modelPolicy = async (spec: Parameters<typeof loadNodeModelPolicy>[0]): Promise<LoadedPolicy> => {
  const policy = await loadNodeModelPolicy(spec);
  return { generation: policy, tokenizer: policy.tokenizer, dispose: () => policy.dispose() };
};

const example = async () =>
  parseScenario(JSON.parse(await readFile(join(import.meta.dirname, "examples", "sliding-puzzle-model.json"), "utf8")));

describe("a rollout with the built-in model policy (Node)", () => {
  for (const mode of ["sync", "async"] as const) {
    it(`${mode}: runs every turn, with real log-probabilities, the same on every run`, async () => {
      const scenario = { ...(await example()), mode };
      const a = await runScenario(scenario, { modelPolicy });
      const b = await runScenario(scenario, { modelPolicy });
      expect(JSON.stringify({ ...a, metrics: withoutTiming(a.metrics) })).toBe(JSON.stringify({ ...b, metrics: withoutTiming(b.metrics) }));
      expect(a.samples).toHaveLength(3);
      for (const sample of a.samples) {
        const assistant = sample.message_log.filter((m) => m.role === "assistant");
        expect(assistant.length).toBeGreaterThan(0);
        for (const m of assistant) {
          expect(m.generation_logprobs).toHaveLength(m.token_ids.length);
          expect(m.generation_logprobs!.every((lp) => lp <= 0 && Number.isFinite(lp))).toBe(true);
          expect(m.token_ids.length).toBeLessThanOrEqual(48);
        }
        // Async ends a sample whose response hit its token limit (D3); sync lets it go on.
        expect(["terminated", "max_turns", "truncated_context", "truncated_response"]).toContain(sample.termination);
      }
      expect(a.metrics.total_turns).toBeGreaterThan(0);
    });
  }

  it("sync and async agree token for token: sampling is seeded per sample and turn", async () => {
    const sync = await runScenario({ ...(await example()), mode: "sync" }, { modelPolicy });
    const async_ = await runScenario({ ...(await example()), mode: "async" }, { modelPolicy });
    expect(async_.samples.map((s) => s.message_log.map((m) => m.token_ids))).toEqual(sync.samples.map((s) => s.message_log.map((m) => m.token_ids)));
  });
});
