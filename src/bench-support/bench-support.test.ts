/** The benchmarks' code paths at a tiny size (not timed): the contenders do the same work, the ideals are right. */

import { describe, expect, it } from "vitest";
import { byteLevelTokenizer, runMultiTurnRollout, type EnvironmentInterface, type EnvMessage, type Message, type Metadata } from "../core/index.js";
import { SlidingPuzzleEnv } from "../envs/sliding-puzzle/index.js";
import { oraclePolicy } from "../policy/oracle/index.js";
import { slidingPuzzleOracle } from "../policy/oracle/sliding-puzzle.js";
import { ASYNC_SYNC_DEFAULTS, idealWallMs, latencyOf, LatencyEnv, runAsyncSyncBenchmark, runPath, ServerStandIn } from "./async-sync.js";
import { PUZZLE_TASK } from "./common.js";
import { bareLoop, checkSameWork, ENGINE_BENCH_DEFAULTS, engineFixture, runBare, runEngine, runEngineBenchmark } from "./engine.js";

const tiny = { ...ENGINE_BENCH_DEFAULTS, samples: 8, turns: 3 };

describe("engine-overhead benchmark", () => {
  it("the bare loop gives the rollout's message logs, rewards and endings", async () => {
    const fixture = engineFixture({ ...tiny, turns: 30 });
    const bare = await bareLoop(fixture.cfg, fixture.data, fixture.batch, {
      tokenizer: byteLevelTokenizer,
      solvers: [slidingPuzzleOracle],
      env: new SlidingPuzzleEnv(),
    });
    const [out] = await runMultiTurnRollout({
      policyGeneration: oraclePolicy(byteLevelTokenizer, { seed: tiny.oracleSeed, errorRate: tiny.errorRate }),
      tokenizer: byteLevelTokenizer,
      taskToEnv: { [PUZZLE_TASK]: new SlidingPuzzleEnv() },
      inputBatch: fixture.batch,
      maxSeqLen: tiny.maxSeqLen,
      maxRolloutTurns: 30,
    });
    expect(bare.logs).toEqual(out.get("message_log") as Message[][]);
    expect(bare.rewards).toEqual(out.get("total_reward"));
    expect(bare.terminations).toEqual(out.get("termination"));
    // The configuration keeps most samples going: some reach the last turn, none ends at once.
    expect(bare.turns.some((t) => t === 30)).toBe(true);
    expect(Math.min(...bare.turns)).toBeGreaterThan(3);
  });

  it("every contender makes the same oracle calls, sample steps and encode calls", async () => {
    const fixture = engineFixture(tiny);
    const bare = await runBare(fixture);
    const sync = await runEngine(fixture, "sync");
    const async = await runEngine(fixture, "async");
    const sampleSteps = await runBare(fixture, "bare-sample-steps");
    expect(bare.counts.oracle_calls).toBe(8 * 3);
    expect(bare.counts.env_sample_steps).toBe(8 * 3);
    expect(bare.counts.encode_calls).toBe(2 * 8 * 3); // each response and each observation
    expect(sync.counts.env_step_calls).toBe(3);
    expect(async.counts.env_step_calls).toBe(8 * 3);
    expect(sampleSteps.counts.env_step_calls).toBe(8 * 3);
    checkSameWork(bare, sync);
    checkSameWork(bare, async);
    checkSameWork(bare, sampleSteps);
    expect(() => checkSameWork(bare, { ...sync, counts: { ...sync.counts, oracle_calls: 1 } })).toThrow(/oracle_calls/);
    expect(() => checkSameWork(bare, { ...sync, summary: { ...sync.summary, transcript_hash: 0 } })).toThrow(/transcripts differ/);
  });

  it("runs end to end and reports its ratios", async () => {
    const result = await runEngineBenchmark({ config: tiny, rounds: 1 });
    expect(result.sample_turns).toBe(24);
    expect(result.counts.sync?.oracle_calls).toBe(24);
    expect(result.counts["bare+rows"]?.oracle_calls).toBe(24);
    expect(result.rows_over_bare).toBeGreaterThan(0);
    expect(result.sync_over_bare).toBeGreaterThan(0);
    expect(result.async_over_bare).toBeGreaterThan(0);
    expect(result.async_over_bare_sample_steps).toBeGreaterThan(0);
    expect(result.counts["bare-sample-steps"]?.env_step_calls).toBe(24);
  });
});

describe("async-against-sync benchmark", () => {
  it("computes each path's ideal from a latency table", () => {
    // sample → turn → ms; sample 2 ended after one turn.
    const table = [
      [10, 40, 5],
      [30, 0, 20],
      [50],
    ];
    // sync: max per turn 50 + 40 + 20; async: the slowest sample's sum, max(55, 50, 50).
    expect(idealWallMs(table)).toEqual({ sync: 110, async: 55 });
    expect(idealWallMs([])).toEqual({ sync: 0, async: 0 });
  });

  it("draws seeded whole-millisecond latencies in range", () => {
    const drawn = Array.from({ length: 200 }, (_, i) => latencyOf(0, i, 3, 50));
    expect(drawn.every((ms) => Number.isInteger(ms) && ms >= 0 && ms <= 50)).toBe(true);
    expect(new Set(drawn).size).toBeGreaterThan(30);
    expect(latencyOf(0, 7, 3, 50)).toBe(latencyOf(0, 7, 3, 50));
  });

  it("a batched step answers after its slowest sample, and records every sample's latency", async () => {
    // A clock that the inner step advances by 3 ms, and a sleep that records what it was asked for.
    let clock = 100;
    const slept: number[] = [];
    const inner = new ServerStandIn();
    const timed = { step: (logs: EnvMessage[][], metadata: Metadata[]) => ((clock += 3), inner.step(logs, metadata)) } as EnvironmentInterface;
    const env = new LatencyEnv(timed, 1, 20, { now: () => clock, sleep: async (ms) => void slept.push(ms) });
    const log = (action: string) => [{ role: "user", content: "go" }, { role: "assistant", content: `<action>${action}</action>` }];
    const out = await env.step([log("up"), log("down")], [{ bench_sample: 0 }, { bench_sample: 1 }]);
    const slowest = Math.max(latencyOf(1, 0, 0, 20), latencyOf(1, 1, 0, 20));
    expect(slowest).toBeGreaterThan(Math.min(latencyOf(1, 0, 0, 20), latencyOf(1, 1, 0, 20)));
    // It waits out the slowest sample's latency, less the time the answer itself took.
    expect(slept).toEqual([slowest - 3]);
    expect(env.table).toEqual([[latencyOf(1, 0, 0, 20)], [latencyOf(1, 1, 0, 20)]]);
    expect(out.observations.map((o) => o.content)).toEqual([
      "<environment>\nAction 'up' done.\n</environment>\n",
      "<environment>\nAction 'down' done.\n</environment>\n",
    ]);
    await expect(env.step([log("up")], [{ bench_sample: 0 }])).rejects.toThrow(/stepped twice/);
  });

  it("both paths step the same samples at the same turns, and the benchmark reports its ratios", async () => {
    const cfg = { ...ASYNC_SYNC_DEFAULTS, samples: 8, turns: 3, maxLatencyMs: 4 };
    const sync = await runPath(cfg, "sync");
    const async = await runPath(cfg, "async");
    expect(sync.table).toEqual(async.table);
    expect(sync.turns).toEqual(new Array(8).fill(3));
    expect(sync.step_calls).toBe(3);
    expect(async.step_calls).toBe(24);
    const result = await runAsyncSyncBenchmark({ config: cfg, rounds: 1 });
    expect(result.sample_turns).toBe(24);
    expect(result.ideal_ms).toEqual(idealWallMs(sync.table));
    expect(result.sync_over_ideal).toBeGreaterThan(0);
  });
});
