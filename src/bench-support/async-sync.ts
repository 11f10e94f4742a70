/**
 * Benchmark 2, async against sync when environment latency varies: the real `runMultiTurnRollout` and
 * `runAsyncMultiTurnRollout` against a latency-injecting environment, with a scripted (deterministic, nearly free)
 * policy, on the sliding puzzle's prompts.
 *
 * The environment stands in for a remote environment server (`LatencyEnv` around `ServerStandIn`): each sample's
 * step at each turn takes a latency drawn from a generator seeded by (seed, sample, turn), a whole number of
 * milliseconds in 0…maxLatencyMs, the same in both paths, and answers a short observation; a `step` call answers as
 * long after it was made as the slowest of its samples, as a batched server would. The sync path steps its whole
 * batch in one call per turn, the async path one sample per call. The server's own work is not on the rollout's
 * thread, so the stand-in does next to none (an in-process environment's work is what benchmark 1 measures). The
 * wrapper records every latency it draws; from those, each path's ideal wall time (what it would take if nothing but
 * the waits took time) is
 * - sync: the sum over turns of the slowest sample stepped at that turn;
 * - async: the slowest sample's own sum over its turns.
 */

import {
  byteLevelTokenizer,
  Rng,
  runAsyncMultiTurnRollout,
  runMultiTurnRollout,
  type EnvironmentInterface,
  type EnvironmentReturn,
  type EnvMessage,
  type Message,
  type Metadata,
} from "../core/index.js";
import { scriptedPolicy } from "../policy/scripted.js";
import { inputBatchOf, median, PUZZLE_TASK, puzzleData, round, type PuzzleBatchConfig } from "./common.js";

export interface AsyncSyncConfig extends PuzzleBatchConfig {
  turns: number;
  maxLatencyMs: number;
  latencySeed: number;
  maxSeqLen: number;
}

/** 256 3×3 boards, 30 turns, 0–50 ms per sample step. */
export const ASYNC_SYNC_DEFAULTS: AsyncSyncConfig = {
  samples: 256,
  turns: 30,
  side: 3,
  shuffleMoves: 101,
  maxMoves: 30,
  seed: 2,
  maxLatencyMs: 50,
  latencySeed: 0,
  maxSeqLen: 8192,
};

/** The latency of one sample's step at one turn: whole milliseconds in 0…maxMs, seeded by (seed, sample, turn). */
export const latencyOf = (seed: number, sample: number, turn: number, maxMs: number): number =>
  Rng.derive(seed, "latency", sample, turn).int(0, maxMs);

/** Recorded latencies: `table[sample][turn]`, undefined where the sample was not stepped at that turn. */
export type LatencyTable = (number | undefined)[][];

/** Each path's ideal wall time from recorded latencies (see the top of this file). */
export function idealWallMs(table: LatencyTable): { sync: number; async: number } {
  const turns = Math.max(0, ...table.map((row) => row.length));
  let sync = 0;
  for (let t = 0; t < turns; t++) {
    let slowest = 0;
    for (const row of table) slowest = Math.max(slowest, row[t] ?? 0);
    sync += slowest;
  }
  let async = 0;
  for (const row of table) async = Math.max(async, row.reduce<number>((a, b) => a + (b ?? 0), 0));
  return { sync, async };
}

const sleep = (ms: number) => (ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve());

/**
 * Wraps an environment as a server that answers a `step` call the largest latency of its samples after the call
 * (the inner step's own time included, as long as it is shorter). The sample is read from `bench_sample` in its
 * metadata, the turn from the number of assistant messages in its log.
 */
export class LatencyEnv implements EnvironmentInterface {
  readonly table: LatencyTable = [];
  stepCalls = 0;

  constructor(
    private readonly inner: EnvironmentInterface,
    private readonly seed: number,
    private readonly maxMs: number,
    /** The clock and the wait (tests give their own: a timer may fire a millisecond early by performance.now()). */
    private readonly timing: { now: () => number; sleep: (ms: number) => Promise<void> } = { now: () => performance.now(), sleep },
  ) {}

  async step(logs: EnvMessage[][], metadata: Metadata[]): Promise<EnvironmentReturn> {
    const called = this.timing.now();
    this.stepCalls += 1;
    let wait = 0;
    logs.forEach((log, j) => {
      const sample = (metadata[j] as { bench_sample?: unknown } | null)?.bench_sample;
      if (typeof sample !== "number") throw new Error("LatencyEnv: metadata without bench_sample");
      const turn = log.filter((m) => m.role === "assistant").length - 1;
      const ms = latencyOf(this.seed, sample, turn, this.maxMs);
      const row = (this.table[sample] ??= []);
      if (row[turn] !== undefined) throw new Error(`LatencyEnv: sample ${sample} stepped twice at turn ${turn}`);
      row[turn] = ms;
      wait = Math.max(wait, ms);
    });
    const answer = await this.inner.step(logs, metadata);
    await this.timing.sleep(wait - (this.timing.now() - called));
    return answer;
  }
}

/**
 * The remote environment's answer, computed in next to no time: a short observation naming the action it read, no
 * reward, never done, the metadata kept.
 */
export class ServerStandIn implements EnvironmentInterface {
  step(logs: EnvMessage[][], metadata: Metadata[]): EnvironmentReturn {
    return {
      observations: logs.map((log) => {
        const action = /<action>(.*?)<\/action>/.exec(log[log.length - 1]?.content ?? "")?.[1] ?? "none";
        return { role: "environment", content: `<environment>\nAction '${action}' done.\n</environment>\n` };
      }),
      metadata: metadata.map(() => null),
      next_stop_strings: logs.map(() => ["</action>"]),
      rewards: logs.map(() => 0),
      terminateds: logs.map(() => false),
      answers: null,
    };
  }
}

/** Scripted moves (the blank back and forth): a response of the length a model's would be. */
export function scriptedMoves(samples: number, turns: number): string[][] {
  return Array.from({ length: samples }, (_, s) =>
    Array.from({ length: turns }, (_, t) => `Let me think.\n<action>${(s + t) % 2 ? "left" : "right"}</action>`),
  );
}

export interface PathRun {
  mode: "sync" | "async";
  wall_ms: number;
  table: LatencyTable;
  step_calls: number;
  turns: number[];
  terminations: Record<string, number>;
}

export async function runPath(cfg: AsyncSyncConfig, mode: "sync" | "async", maxLatencyMs = cfg.maxLatencyMs): Promise<PathRun> {
  const data = puzzleData(cfg).map((d, i) => ({ ...d, extra_env_info: { ...(d.extra_env_info as object), bench_sample: i } }));
  const batch = inputBatchOf(data, byteLevelTokenizer);
  const env = new LatencyEnv(new ServerStandIn(), cfg.latencySeed, maxLatencyMs);
  const run = mode === "sync" ? runMultiTurnRollout : runAsyncMultiTurnRollout;
  const started = performance.now();
  const [out] = await run({
    policyGeneration: scriptedPolicy(scriptedMoves(cfg.samples, cfg.turns), byteLevelTokenizer),
    tokenizer: byteLevelTokenizer,
    taskToEnv: { [PUZZLE_TASK]: env },
    inputBatch: batch,
    maxSeqLen: cfg.maxSeqLen,
    maxRolloutTurns: cfg.turns,
  });
  const wall = performance.now() - started;
  const terminations: Record<string, number> = {};
  for (const t of out.get("termination") as string[]) terminations[t] = (terminations[t] ?? 0) + 1;
  const turns = (out.get("message_log") as Message[][]).map((log) => log.filter((m) => m.role === "assistant").length);
  return { mode, wall_ms: wall, table: env.table, step_calls: env.stepCalls, turns, terminations };
}

const sameTable = (a: LatencyTable, b: LatencyTable) => JSON.stringify(a) === JSON.stringify(b);

export interface AsyncSyncResult {
  benchmark: "async-vs-sync";
  config: AsyncSyncConfig;
  rounds: number;
  sample_turns: number;
  terminations: Record<string, number>;
  step_calls: { sync: number; async: number };
  /** From the recorded latencies (identical in both paths; checked). */
  ideal_ms: { sync: number; async: number };
  /** Medians over rounds. */
  wall_ms: { sync: number; async: number };
  /** Each path's wall over its ideal: target ≤ 1.1. */
  sync_over_ideal: number;
  async_over_ideal: number;
  async_over_sync: number;
  ideal_async_over_sync: number;
  /** The same rollouts with no latency: what the paths' own work costs (wall, median). */
  no_latency_ms: { sync: number; async: number };
  rounds_ms: { sync: number; async: number }[];
  target: number;
}

export interface AsyncSyncOptions {
  config?: Partial<AsyncSyncConfig>;
  rounds?: number;
  between?: () => void;
  log?: (line: string) => void;
}

export async function runAsyncSyncBenchmark(options: AsyncSyncOptions = {}): Promise<AsyncSyncResult> {
  const cfg = { ...ASYNC_SYNC_DEFAULTS, ...options.config };
  const rounds = options.rounds ?? 3;
  const between = options.between ?? (() => {});
  const log = options.log ?? (() => {});

  // Warm-up without latency (also the paths' own cost, measured again below).
  const small = { ...cfg, samples: Math.min(cfg.samples, 16), turns: Math.min(cfg.turns, 4) };
  await runPath(small, "sync", 0);
  await runPath(small, "async", 0);

  const runs: { sync: PathRun; async: PathRun }[] = [];
  const noLatency: { sync: number; async: number }[] = [];
  for (let r = 0; r < rounds; r++) {
    const order: ("sync" | "async")[] = r % 2 ? ["async", "sync"] : ["sync", "async"];
    const got = {} as { sync: PathRun; async: PathRun };
    for (const mode of order) {
      between();
      got[mode] = await runPath(cfg, mode);
      log(`round ${r + 1}/${rounds}: ${mode} ${round(got[mode].wall_ms)} ms`);
    }
    const free = {} as { sync: number; async: number };
    for (const mode of order) {
      between();
      free[mode] = (await runPath(cfg, mode, 0)).wall_ms;
    }
    noLatency.push(free);
    runs.push(got);
  }

  const first = runs[0]!;
  for (const { sync, async } of runs) {
    if (!sameTable(sync.table, first.sync.table) || !sameTable(async.table, first.sync.table)) {
      throw new Error("the paths drew different latencies (they must step the same samples at the same turns)");
    }
    if (sync.turns.join() !== async.turns.join()) throw new Error("the paths ran different turns");
  }
  const ideal = idealWallMs(first.sync.table);
  const wall = { sync: median(runs.map((r) => r.sync.wall_ms)), async: median(runs.map((r) => r.async.wall_ms)) };
  return {
    benchmark: "async-vs-sync",
    config: cfg,
    rounds,
    sample_turns: first.sync.turns.reduce((a, b) => a + b, 0),
    terminations: first.sync.terminations,
    step_calls: { sync: first.sync.step_calls, async: first.async.step_calls },
    ideal_ms: ideal,
    wall_ms: { sync: round(wall.sync), async: round(wall.async) },
    sync_over_ideal: round(wall.sync / ideal.sync, 3),
    async_over_ideal: round(wall.async / ideal.async, 3),
    async_over_sync: round(wall.async / wall.sync, 3),
    ideal_async_over_sync: round(ideal.async / ideal.sync, 3),
    no_latency_ms: {
      sync: round(median(noLatency.map((n) => n.sync))),
      async: round(median(noLatency.map((n) => n.async))),
    },
    rounds_ms: runs.map((r) => ({ sync: round(r.sync.wall_ms), async: round(r.async.wall_ms) })),
    target: 1.1,
  };
}
