/** The model-rollout benchmark's code at a tiny size (builtin:tiny, 2 samples × 2 turns; not timed): what it counts. */

import { describe, expect, it } from "vitest";
import { loadNodeModel } from "../policy/llm/node.js";
import type { DecodeBatchRecord } from "./decode-batch.js";
import { compareTokens, generatedTokens, MODEL_ROLLOUT_DEFAULTS, newContextTokens, runModelRolloutBenchmark, runOnce, summarizeDecode } from "./model-rollout.js";

const msg = (role: string, n: number) => ({ role, token_ids: Array.from({ length: n }, (_, i) => i) });
const tiny = {
  ...MODEL_ROLLOUT_DEFAULTS,
  model: "builtin:tiny",
  samples: 2,
  turns: 2,
  maxNewTokens: 8,
  jitterMs: 5,
  decodeBatches: [1, 4],
  decodePromptTokens: 24,
  decodeNewTokens: 6,
};

describe("model-rollout benchmark", () => {
  it("counts new context tokens: the prompt, then what came since each assistant message", () => {
    const log = [msg("user", 100), msg("assistant", 7), msg("environment", 20), msg("assistant", 5), msg("environment", 30)];
    // The last observation never reached the model.
    expect(newContextTokens(log)).toBe(120);
    expect(generatedTokens(log)).toBe(12);
    expect(newContextTokens([msg("system", 3), msg("user", 4), msg("assistant", 1), msg("tool", 2), msg("environment", 5), msg("assistant", 1)])).toBe(14);
    expect(newContextTokens([msg("user", 9)])).toBe(0);
  });

  it("finds the first differing turn and position of each sample", () => {
    const a = [[[1, 2, 3], [4, 5]], [[1], [2]]];
    expect(compareTokens(a, a)).toEqual([]);
    expect(compareTokens(a, [[[1, 2, 3], [4, 6]], [[1], [2]]])).toEqual([{ sample: 0, turn: 1, position: 1 }]);
    // A turn more, a shorter reply.
    expect(compareTokens(a, [[[1, 2, 3], [4, 5]], [[1], [2], [3]]])).toEqual([{ sample: 1, turn: 2, position: 0 }]);
    expect(compareTokens(a, [[[1, 2], [4, 5]], [[1], [2]]])).toEqual([{ sample: 0, turn: 0, position: 2 }]);
  });

  it("one run: its tokens, prefill and context counts agree with its result", async () => {
    const loaded = await loadNodeModel({ model: "builtin:tiny" });
    const { record, tokens } = await runOnce(loaded, tiny, "continuous", "sync");
    expect(record.sample_turns).toBe(4);
    expect(record.generated_tokens).toBe(tokens.flat(2).length);
    expect(record.generated_tokens).toBeGreaterThan(0);
    // The puzzle's prompt and one observation per sample, each new to the model once.
    expect(record.new_context_tokens).toBeGreaterThan(2 * 800);
    // Each later turn also runs the previous turn's last generated token (sampled, never fed): at most one a turn;
    // a sync turn's rows share their prompts' common prefix (the puzzle's instructions), run once.
    expect(record.prefilled_tokens).toBeLessThanOrEqual(record.new_context_tokens + 2);
    expect(record.prefilled_tokens + record.reused_tokens).toBeGreaterThan(record.new_context_tokens);
    expect(record.engine_stats?.sharedPrefixes).toBe(1);
    expect(record.prefill_ratio).toBeLessThan(1.01);
    expect(record.reused_tokens).toBeGreaterThan(0);
    expect(record.engine_stats?.prefilled).toBe(record.prefilled_tokens);
    expect(record.longest_context).toBeGreaterThan(1000);
    // Every response cut at its limit is counted (and its sample went on: both turns ran).
    expect(record.cut_responses).toBe(tokens.flat().filter((t) => t.length === tiny.maxNewTokens).length);
    const old = await runOnce(loaded, tiny, "generate", "sync");
    expect(old.record.engine_stats).toBeNull();
    expect(compareTokens(tokens, old.tokens)).toEqual([]);
    expect(old.record.generated_tokens).toBe(record.generated_tokens);
  }, 120_000);

  it("runs end to end and reports its ratios and comparisons", async () => {
    const loaded = await loadNodeModel({ model: "builtin:tiny" });
    const result = await runModelRolloutBenchmark({ loaded, backend: "node-cpu", config: tiny });
    // 2 engines × 2 modes, then the new policy sync and async with latency.
    expect(result.runs.map((r) => `${r.engine} ${r.mode} ${r.variant}`).sort()).toEqual(
      ["continuous async jitter", "continuous async none", "continuous sync jitter", "continuous sync none", "generate async none", "generate sync none"],
    );
    expect(result.token_comparisons.map((c) => c.mode)).toEqual(["sync", "async"]);
    expect(result.speedup.sync).toBeGreaterThan(0);
    expect(result.speedup.async).toBeGreaterThan(0);
    expect(result.prefill_ratio.sync).toBeLessThan(1.01);
    expect(result.async_over_sync_tokens_per_s).toBeGreaterThan(0);
    expect(result.jitter_async_over_sync_wall).toBeGreaterThan(0);
    // The latencies were drawn per sample step: 2 samples × 2 turns, each in 0…5 ms.
    expect(result.jitter_ideal_ms!.sync).toBeGreaterThanOrEqual(result.jitter_ideal_ms!.async);
    for (const r of result.runs) expect(r.sample_turns).toBe(4);
    expect(result.sync_async_mismatches).toEqual([]);
    // Part decode: one call per batch size, every row decoding its 6 tokens (the first from its prefill).
    expect(result.decode_runs.map((r) => [r.batch, r.decode_steps, r.prompt_tokens, r.new_tokens])).toEqual([
      [1, 5, 24, 6],
      [4, 5, 24, 6],
    ]);
    expect(Object.keys(result.decode_tokens_per_s).sort()).toEqual(["1", "4"]);
    expect(result.decode_batch_speedup).toBeGreaterThan(0);
  }, 240_000);

  it("part decode: the largest batch over batch 1 pairs each round's two figures, medians per batch", () => {
    const rec = (batch: number, round: number, tps: number): DecodeBatchRecord => ({
      batch,
      round,
      prompt_tokens: 8,
      new_tokens: 4,
      decode_ms: 1,
      wall_ms: 1,
      decode_tokens_per_s: tps,
      decode_steps: 3,
    });
    const cfg = { ...tiny, decodeBatches: [1, 32] };
    const runs = [rec(1, 0, 10), rec(32, 0, 200), rec(32, 1, 90), rec(1, 1, 9), rec(1, 2, 20), rec(32, 2, 100)];
    const summary = summarizeDecode(cfg, runs);
    expect(summary.decode_tokens_per_s).toEqual({ 1: 10, 32: 100 });
    // The rounds' ratios are 20, 10 and 5: their median.
    expect(summary.decode_batch_speedup).toBe(10);
    expect(summarizeDecode(cfg, runs.filter((r) => r.batch === 32)).decode_batch_speedup).toBeNull();
  });
});
