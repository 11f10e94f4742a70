/**
 * Benchmark 8, a multi-turn model rollout (`npm run bench:model-rollout`): the model policy on its decode engine
 * (per-sample KV caches kept across turns, continuous batching: `engine: "continuous"`) against the policy it
 * replaced (transformers.js `generate()`, one call at a time: `engine: "generate"`), on the same loaded model, the
 * same scenario (the sliding puzzle, greedy, contexts over 1,000 tokens), measured side by side in one run: rounds
 * interleave the contenders (their order alternates), each figure is the median over rounds. Node and the benchmark
 * page (bench/model-rollout-page.ts) both run `runModelRolloutBenchmark` with the model they loaded.
 *
 * What it measures:
 * - (a) generated tokens per second of a whole rollout (`runScenario`, wall time from the start of the rollout to
 *   its result), new over old, sync and async, and whether the two produced the same tokens for every sample;
 * - (b) prompt tokens the new policy ran through the model (`lab/prefilled_tokens`) over the context tokens that
 *   were new to it (`newContextTokens`: for each sample, the first prompt whole, then at each later turn the
 *   observation and other messages added since its previous assistant message);
 * - (c) async over sync with the new policy: generated tokens per second with no environment latency, and wall
 *   time when each sample's step takes a seeded 0–50 ms (`LatencyEnv` of benchmark 2 around the puzzle; a batched
 *   step as long as its slowest sample).
 */

import type { GenerationInterface, GenerationOutputSpec, Message } from "../core/index.js";
import { findEnvironment, type EnvironmentDefinition, type EnvironmentLookup, type GeneratedDatum } from "../envs/index.js";
import { ModelPolicy } from "../policy/llm/model-policy.js";
import type { RolloutResultJson } from "../scenario/result.js";
import type { RunScenarioOptions } from "../scenario/run.js";
import { runScenario } from "../scenario/run.js";
import { parseScenario, type Scenario } from "../scenario/schema.js";
import { idealWallMs, LatencyEnv, type LatencyTable } from "./async-sync.js";
import { measureDecodeBatch, type DecodeBatchRecord } from "./decode-batch.js";
import { hashText, median, round } from "./common.js";

export type EngineKind = "continuous" | "generate";
export type Mode = "sync" | "async";

export interface ModelRolloutConfig {
  model: string;
  samples: number;
  turns: number;
  rounds: number;
  maxNewTokens: number;
  maxSeqLen: number;
  /** The puzzle dataset's seed. */
  datasetSeed: number;
  /** Each sample's step takes a seeded whole number of milliseconds in 0…jitterMs (part c). */
  jitterMs: number;
  jitterSeed: number;
  /** Also one round of seeded sampling (temperature 1), new against old, sync: do their tokens match? */
  sampledRound: boolean;
  samplingSeed: number;
  /**
   * The parts to run: `ab` (a and b: new against old), `jitter` (c with latency), `decode` (d's second half: decode
   * tokens per second at each of `decodeBatches`, `decode-batch.ts`).
   */
  parts: ("ab" | "jitter" | "decode")[];
  decodeBatches: number[];
  decodePromptTokens: number;
  decodeNewTokens: number;
  /** Warm up with the full batch and turns (2 new tokens a turn) before measuring. */
  fullWarmUp: boolean;
  /** The rollout paths part `ab` runs. */
  modes: Mode[];
  /** The policies part `ab` runs (both by default; one alone to look at it without the other in the same runtime). */
  engines: EngineKind[];
  /**
   * A response cut at `max_new_tokens` does not end its sample (`goOnWhenCut`): the async path would end it there
   * (reference behaviour, docs/reference.md D3) while sync goes on, and a random-weight model's replies mostly run to
   * the limit, so without this async would run about one turn a sample and sync all of them.
   */
  goOnWhenCut: boolean;
}

/** 16 samples × 8 turns of the sliding puzzle on builtin:small, greedy, 32 new tokens a turn. */
export const MODEL_ROLLOUT_DEFAULTS: ModelRolloutConfig = {
  model: "builtin:small",
  samples: 16,
  turns: 8,
  rounds: 1,
  maxNewTokens: 32,
  maxSeqLen: 4096,
  datasetSeed: 0,
  jitterMs: 50,
  jitterSeed: 0,
  sampledRound: false,
  samplingSeed: 7,
  parts: ["ab", "jitter", "decode"],
  decodeBatches: [1, 32],
  decodePromptTokens: 512,
  decodeNewTokens: 64,
  modes: ["sync", "async"],
  engines: ["continuous", "generate"],
  fullWarmUp: true,
  goOnWhenCut: true,
};

type PolicyArgs = ConstructorParameters<typeof ModelPolicy>;

/** What a loaded model gives: the entries pass in what `loadNodeModel` / `loadBrowserModel` returned. */
export interface LoadedModel {
  runtime: PolicyArgs[0];
  model: PolicyArgs[1];
  tokenizer: PolicyArgs[2];
}

const PUZZLE_TASK = "sliding_puzzle";

/** The benchmark's scenario: the puzzle dataset, a model policy, greedy unless `sampling` is given. */
export function rolloutScenario(cfg: ModelRolloutConfig, mode: Mode, sampling?: { seed: number; temperature: number }): Scenario {
  return parseScenario({
    envs: { [PUZZLE_TASK]: { env: "sliding_puzzle", config: {} } },
    dataset: { task_name: PUZZLE_TASK, size: cfg.samples, seed: cfg.datasetSeed },
    policy: { kind: "model", model: cfg.model, ...(sampling ?? {}) },
    mode,
    greedy: sampling === undefined,
    max_rollout_turns: cfg.turns,
    max_new_tokens: cfg.maxNewTokens,
    max_seq_len: cfg.maxSeqLen,
  });
}

/**
 * The puzzle environment with every sample step delayed by `LatencyEnv` (seeded by sample and turn); the dataset
 * marks each datum with its position (`bench_sample`), which the puzzle's metadata keeps.
 */
export function jitteredPuzzle(seed: number, maxMs: number, tables: LatencyTable[]): EnvironmentLookup {
  const base = findEnvironment("sliding_puzzle")!;
  const wrapped: EnvironmentDefinition = {
    ...base,
    async create(config) {
      const env = new LatencyEnv(await base.create(config), seed, maxMs);
      tables.push(env.table);
      return env;
    },
    async generateDataset(request) {
      const data = (await base.generateDataset(request)) as GeneratedDatum[];
      return data.map((d, i) => ({ ...d, extra_env_info: { ...(d.extra_env_info as object), bench_sample: i } }) as GeneratedDatum);
    },
  };
  return (name) => (name === "sliding_puzzle" ? wrapped : findEnvironment(name));
}

/**
 * The policy with every output's `truncated` flags cleared (counted into `cut`), so that a response cut at its
 * limit does not end an async sample: both paths then run every sample's turns (`ModelRolloutConfig.goOnWhenCut`).
 */
export function goOnWhenCut(policy: GenerationInterface, cut: { responses: number }): GenerationInterface {
  const uncut = (out: GenerationOutputSpec): GenerationOutputSpec => {
    if (!out.truncated) return out;
    for (const t of out.truncated) if (t) cut.responses += 1;
    return { ...out, truncated: out.truncated.map(() => false) };
  };
  const generateAsync = policy.generateAsync?.bind(policy);
  return {
    generate: async (data, greedy, options) => uncut(await policy.generate(data, greedy, options)),
    ...(generateAsync
      ? {
          async *generateAsync(data, greedy, options) {
            for await (const [row, out] of generateAsync(data, greedy, options)) yield [row, uncut(out)] as [number, GenerationOutputSpec];
          },
        }
      : {}),
    ...(policy.releaseSamples ? { releaseSamples: (ids: readonly number[]) => policy.releaseSamples!(ids) } : {}),
  };
}

/** A sample's generated tokens: the sum over its assistant messages. */
export function generatedTokens(log: readonly Pick<Message, "role" | "token_ids">[]): number {
  let n = 0;
  for (const m of log) if (m.role === "assistant") n += m.token_ids.length;
  return n;
}

/**
 * The context tokens a sample's turns gave the model that it had not seen: before its first assistant message, every
 * message (the prompt); before each later one, the messages added since the previous assistant message (the
 * observation). Messages after the last assistant message never reached the model and are not counted.
 */
export function newContextTokens(log: readonly Pick<Message, "role" | "token_ids">[]): number {
  let total = 0;
  let pending = 0;
  for (const m of log) {
    if (m.role === "assistant") {
      total += pending;
      pending = 0;
    } else {
      pending += m.token_ids.length;
    }
  }
  return total;
}

/** Each sample's generated tokens, one list per assistant message. */
export function assistantTokens(result: RolloutResultJson): number[][][] {
  return result.samples.map((s) => s.message_log.filter((m) => m.role === "assistant").map((m) => [...m.token_ids]));
}

export interface TokenMismatch {
  sample: number;
  /** The first assistant message (turn) whose tokens differ, and the first differing position in it. */
  turn: number;
  position: number;
}

/** Samples whose generated tokens differ between two runs of the same scenario. */
export function compareTokens(a: number[][][], b: number[][][]): TokenMismatch[] {
  const out: TokenMismatch[] = [];
  for (let s = 0; s < Math.max(a.length, b.length); s++) {
    const x = a[s] ?? [];
    const y = b[s] ?? [];
    for (let t = 0; t < Math.max(x.length, y.length); t++) {
      const p = x[t] ?? [];
      const q = y[t] ?? [];
      let i = 0;
      while (i < p.length && i < q.length && p[i] === q[i]) i++;
      if (i < p.length || i < q.length || x[t] === undefined || y[t] === undefined) {
        out.push({ sample: s, turn: t, position: i });
        break;
      }
    }
  }
  return out;
}

export interface RunRecord {
  engine: EngineKind;
  mode: Mode;
  /** `none`, `jitter` (0–jitterMs per step), or `sampled` (seeded sampling, no latency). */
  variant: "none" | "jitter" | "sampled";
  round: number;
  wall_ms: number;
  generated_tokens: number;
  tokens_per_s: number;
  sample_turns: number;
  /** The policy's `lab/prefilled_tokens` and `lab/reused_tokens`. */
  prefilled_tokens: number;
  reused_tokens: number;
  new_context_tokens: number;
  /** prefilled ÷ new context tokens (part b; meaningful for the new policy). */
  prefill_ratio: number;
  /** The longest context a turn gave the model (prompt tokens). */
  longest_context: number;
  terminations: Record<string, number>;
  /** The decode engine's counters over this run (null on `generate()`). */
  engine_stats: Record<string, number> | null;
  /** A hash of every sample's generated tokens (equal hashes: equal tokens). */
  tokens_hash: number;
  /** Responses cut at `max_new_tokens` (their samples went on: `goOnWhenCut`). */
  cut_responses: number;
  /** The first sample error's text, where a sample ended in one (its run's figures then mean little). */
  first_error?: string;
}

/** One rollout of the benchmark's scenario on a fresh policy of the loaded model. */
export async function runOnce(
  loaded: LoadedModel,
  cfg: ModelRolloutConfig,
  engine: EngineKind,
  mode: Mode,
  variant: RunRecord["variant"] = "none",
  roundIndex = 0,
): Promise<{ record: RunRecord; tokens: number[][][]; latencies: LatencyTable | null }> {
  const sampling = variant === "sampled" ? { seed: cfg.samplingSeed, temperature: 1 } : undefined;
  const scenario = rolloutScenario(cfg, mode, sampling);
  const tables: LatencyTable[] = [];
  let statsBefore: Record<string, number> | null = null;
  let statsAfter: Record<string, number> | null = null;
  const cut = { responses: 0 };
  const options: RunScenarioOptions = {
    modelPolicy: async (spec) => {
      const policy = new ModelPolicy(loaded.runtime, loaded.model, loaded.tokenizer, { ...spec, engine });
      statsBefore = policy.engineStats ? { ...policy.engineStats } : null;
      return {
        generation: cfg.goOnWhenCut ? goOnWhenCut(policy, cut) : policy,
        tokenizer: policy.tokenizer,
        metrics: () => policy.metrics(),
        dispose: async () => {
          statsAfter = policy.engineStats ? { ...policy.engineStats } : null;
          await policy.dispose();
        },
      };
    },
    ...(variant === "jitter" ? { environments: jitteredPuzzle(cfg.jitterSeed, cfg.jitterMs, tables) } : {}),
  };
  const started = performance.now();
  const result = await runScenario(scenario, options);
  const wall = performance.now() - started;

  let generated = 0;
  let fresh = 0;
  let sampleTurns = 0;
  let longest = 0;
  const terminations: Record<string, number> = {};
  let firstError: string | undefined;
  for (const s of result.samples) {
    if (firstError === undefined && typeof s.error === "string") firstError = s.error;
    generated += generatedTokens(s.message_log);
    fresh += newContextTokens(s.message_log);
    let context = 0;
    for (const m of s.message_log) {
      if (m.role === "assistant") {
        sampleTurns += 1;
        longest = Math.max(longest, context);
      }
      context += m.token_ids.length;
    }
    const t = String(s.termination);
    terminations[t] = (terminations[t] ?? 0) + 1;
  }
  const prefilled = Number(result.metrics["lab/prefilled_tokens"] ?? NaN);
  const reused = Number(result.metrics["lab/reused_tokens"] ?? NaN);
  const tokens = assistantTokens(result);
  const before = statsBefore as Record<string, number> | null;
  const after = statsAfter as Record<string, number> | null;
  const engineStats = before && after ? Object.fromEntries(Object.keys(after).map((k) => [k, after[k]! - (before[k] ?? 0)])) : null;
  return {
    record: {
      engine,
      mode,
      variant,
      round: roundIndex,
      wall_ms: round1(wall),
      generated_tokens: generated,
      tokens_per_s: round1(generated / (wall / 1000)),
      sample_turns: sampleTurns,
      prefilled_tokens: prefilled,
      reused_tokens: reused,
      new_context_tokens: fresh,
      prefill_ratio: round(prefilled / fresh, 4),
      longest_context: longest,
      terminations,
      engine_stats: engineStats,
      tokens_hash: hashText(JSON.stringify(tokens)),
      cut_responses: cut.responses,
      ...(firstError === undefined ? {} : { first_error: firstError }),
    },
    tokens,
    latencies: tables[0] ?? null,
  };
}

const round1 = (x: number) => round(x, 1);

export interface Comparison {
  mode: Mode;
  variant: RunRecord["variant"];
  round: number;
  /** Samples whose tokens differ between new and old (empty: every sample's tokens are the same). */
  mismatches: TokenMismatch[];
}

export interface ModelRolloutResult {
  benchmark: "model-rollout";
  backend: string;
  config: ModelRolloutConfig;
  /** Medians over rounds of generated tokens per second. */
  tokens_per_s: Partial<Record<`${EngineKind}_${Mode}`, number>>;
  /** New over old, tokens per second: the median of the rounds' ratios (target ≥ 3). */
  speedup: Partial<Record<Mode, number>>;
  speedup_rounds: Partial<Record<Mode, number[]>>;
  /** Part b, new policy: prefilled ÷ new context tokens (target ≤ 1.05), per mode (the same in every round). */
  prefill_ratio: Partial<Record<Mode, number>>;
  /** The old policy's prefilled ÷ new context tokens, for scale. */
  old_prefill_ratio: Partial<Record<Mode, number>>;
  /** Part c, new policy, no latency: async ÷ sync tokens per second (target ≥ 0.9), median of the rounds' ratios. */
  async_over_sync_tokens_per_s: number | null;
  /** Part c, new policy, 0–jitterMs per step: async ÷ sync wall (target ≤ 0.8), median of the rounds' ratios. */
  jitter_async_over_sync_wall: number | null;
  jitter_wall_ms: Partial<Record<Mode, number>>;
  /** Each path's ideal wall with the recorded latencies (benchmark 2's definition: the waits alone). */
  jitter_ideal_ms: { sync: number; async: number } | null;
  /** New against old, per mode and round: samples whose tokens differ. */
  token_comparisons: Comparison[];
  /** Whether sync and async (new policy, greedy) produced the same tokens. */
  sync_async_mismatches: TokenMismatch[] | null;
  runs: RunRecord[];
  /** Part decode: medians over rounds of decode tokens per second, by batch size. */
  decode_tokens_per_s: Record<string, number>;
  /** The largest batch's decode tokens per second over batch 1's (median of the rounds' ratios). */
  decode_batch_speedup: number | null;
  decode_runs: DecodeBatchRecord[];
  targets: { speedup: number; prefill_ratio: number; async_over_sync_tokens_per_s: number; jitter_async_over_sync_wall: number };
}

export interface ModelRolloutOptions {
  loaded: LoadedModel;
  backend: string;
  config?: Partial<ModelRolloutConfig>;
  log?: (line: string) => void;
  /** Called before each run (Node's garbage collection). */
  between?: () => void;
}

export async function runModelRolloutBenchmark(options: ModelRolloutOptions): Promise<ModelRolloutResult> {
  const cfg: ModelRolloutConfig = { ...MODEL_ROLLOUT_DEFAULTS, ...options.config };
  const log = options.log ?? (() => {});
  const between = options.between ?? (() => {});
  const runs: RunRecord[] = [];
  const comparisons: Comparison[] = [];
  const run = async (engine: EngineKind, mode: Mode, variant: RunRecord["variant"], r: number) => {
    between();
    const out = await runOnce(options.loaded, cfg, engine, mode, variant, r);
    runs.push(out.record);
    const rec = out.record;
    log(
      `${options.backend} round ${r + 1}/${cfg.rounds}: ${engine} ${mode}${variant === "none" ? "" : ` (${variant})`}: ` +
        `${rec.wall_ms} ms, ${rec.generated_tokens} tokens, ${rec.tokens_per_s} tok/s, prefilled ${rec.prefilled_tokens} / new context ${rec.new_context_tokens}` +
        (rec.first_error === undefined ? "" : `; samples ended in errors, the first: ${rec.first_error}`),
    );
    return out;
  };

  // Warm-up: kernels compile on first use (a small run on each engine), and the first run at full size grows the
  // runtime's memory (its arena, the heap; in Node much of it system time): the full batch and turns once, two new
  // tokens a turn, so that no measured run pays for it (a first run measured paid up to twice a later one's time).
  const small = { ...cfg, samples: Math.min(cfg.samples, 2), turns: 1 };
  const rollouts = cfg.parts.includes("ab") || cfg.parts.includes("jitter");
  const engines = cfg.parts.includes("jitter") ? [...new Set<EngineKind>([...cfg.engines, "continuous"])] : cfg.engines;
  if (rollouts) for (const engine of engines) await runOnce(options.loaded, small, engine, "sync");
  if (rollouts && cfg.fullWarmUp) {
    between();
    const started = performance.now();
    await runOnce(options.loaded, { ...cfg, maxNewTokens: 2 }, engines[0]!, "sync");
    log(`${options.backend}: warm-up at full size (2 new tokens a turn) ${round1(performance.now() - started)} ms`);
  }

  const modes = cfg.modes;
  let syncAsync: TokenMismatch[] | null = null;
  if (cfg.parts.includes("ab")) {
    for (let r = 0; r < cfg.rounds; r++) {
      const newTokens: Partial<Record<Mode, number[][][]>> = {};
      for (const mode of modes) {
        const order: EngineKind[] = (r + (mode === "async" ? 1 : 0)) % 2 ? ["generate", "continuous"] : ["continuous", "generate"];
        const got: Partial<Record<EngineKind, number[][][]>> = {};
        for (const engine of order.filter((e) => cfg.engines.includes(e))) got[engine] = (await run(engine, mode, "none", r)).tokens;
        if (!got.continuous || !got.generate) {
          if (got.continuous) newTokens[mode] = got.continuous;
          continue;
        }
        const mismatches = compareTokens(got.continuous, got.generate);
        comparisons.push({ mode, variant: "none", round: r, mismatches });
        if (mismatches.length) log(`  ${mode}: ${mismatches.length} of ${cfg.samples} samples differ between new and old (first: ${JSON.stringify(mismatches[0])})`);
        newTokens[mode] = got.continuous!;
      }
      if (r === 0 && newTokens.sync && newTokens.async) syncAsync = compareTokens(newTokens.sync, newTokens.async);
    }
    if (cfg.sampledRound) {
      const got: Partial<Record<EngineKind, number[][][]>> = {};
      for (const engine of ["continuous", "generate"] as const) got[engine] = (await run(engine, "sync", "sampled", 0)).tokens;
      comparisons.push({ mode: "sync", variant: "sampled", round: 0, mismatches: compareTokens(got.continuous!, got.generate!) });
    }
  }
  const latencyTables: LatencyTable[] = [];
  if (cfg.parts.includes("jitter")) {
    for (let r = 0; r < cfg.rounds; r++) {
      for (const mode of r % 2 ? (["async", "sync"] as const) : (["sync", "async"] as const)) {
        const out = await run("continuous", mode, "jitter", r);
        if (out.latencies) latencyTables.push(out.latencies);
      }
    }
  }
  const decodeRuns: DecodeBatchRecord[] = [];
  if (cfg.parts.includes("decode")) {
    // A first call at the largest batch compiles its kernels and grows the runtime's memory, unmeasured.
    await measureDecodeBatch(options.loaded, Math.max(...cfg.decodeBatches), cfg.decodePromptTokens, 2);
    for (let r = 0; r < cfg.rounds; r++) {
      const batches = r % 2 ? [...cfg.decodeBatches].reverse() : cfg.decodeBatches;
      for (const batch of batches) {
        between();
        const rec = await measureDecodeBatch(options.loaded, batch, cfg.decodePromptTokens, cfg.decodeNewTokens, r);
        decodeRuns.push(rec);
        log(`${options.backend} round ${r + 1}/${cfg.rounds}: decode at batch ${batch}: ${rec.decode_tokens_per_s} tok/s (${rec.decode_ms} ms of decode passes, ${rec.wall_ms} ms in all)`);
      }
    }
  }
  return { ...summarize(options.backend, cfg, runs, comparisons, syncAsync, latencyTables), ...summarizeDecode(cfg, decodeRuns) };
}

/** Part decode's figures: per batch size the median over rounds; the largest batch over batch 1, per round. */
export function summarizeDecode(cfg: ModelRolloutConfig, runs: DecodeBatchRecord[]): Pick<ModelRolloutResult, "decode_tokens_per_s" | "decode_batch_speedup" | "decode_runs"> {
  const perBatch: Record<string, number> = {};
  for (const batch of cfg.decodeBatches) {
    const at = runs.filter((r) => r.batch === batch);
    if (at.length) perBatch[batch] = round1(median(at.map((r) => r.decode_tokens_per_s)));
  }
  const largest = Math.max(...cfg.decodeBatches);
  const ratios = runs
    .filter((r) => r.batch === largest)
    .flatMap((big) => {
      const one = runs.find((r) => r.batch === 1 && r.round === big.round);
      return one && largest !== 1 ? [big.decode_tokens_per_s / one.decode_tokens_per_s] : [];
    });
  return { decode_tokens_per_s: perBatch, decode_batch_speedup: ratios.length ? round(median(ratios), 2) : null, decode_runs: runs };
}

/** The figures from the runs (exported for the test). */
export function summarize(
  backend: string,
  cfg: ModelRolloutConfig,
  runs: RunRecord[],
  comparisons: Comparison[],
  syncAsync: TokenMismatch[] | null,
  latencyTables: LatencyTable[],
): ModelRolloutResult {
  const pick = (engine: EngineKind, mode: Mode, variant: RunRecord["variant"]) =>
    runs.filter((r) => r.engine === engine && r.mode === mode && r.variant === variant);
  const tokensPerS: ModelRolloutResult["tokens_per_s"] = {};
  const speedup: ModelRolloutResult["speedup"] = {};
  const speedupRounds: ModelRolloutResult["speedup_rounds"] = {};
  const prefill: ModelRolloutResult["prefill_ratio"] = {};
  const oldPrefill: ModelRolloutResult["old_prefill_ratio"] = {};
  for (const mode of ["sync", "async"] as const) {
    const fresh = pick("continuous", mode, "none");
    const old = pick("generate", mode, "none");
    if (fresh.length) tokensPerS[`continuous_${mode}`] = round1(median(fresh.map((r) => r.tokens_per_s)));
    if (old.length) tokensPerS[`generate_${mode}`] = round1(median(old.map((r) => r.tokens_per_s)));
    const paired = fresh.map((f) => [f, old.find((o) => o.round === f.round)] as const).filter((p) => p[1] !== undefined);
    if (paired.length) {
      speedupRounds[mode] = paired.map(([f, o]) => round(f.tokens_per_s / o!.tokens_per_s, 2));
      speedup[mode] = round(median(speedupRounds[mode]), 2);
    }
    if (fresh.length) prefill[mode] = round(median(fresh.map((r) => r.prefill_ratio)), 4);
    if (old.length) oldPrefill[mode] = round(median(old.map((r) => r.prefill_ratio)), 3);
  }
  const ratioByRound = (variant: RunRecord["variant"], value: (r: RunRecord) => number) => {
    const syncs = pick("continuous", "sync", variant);
    const ratios = syncs.flatMap((s) => {
      const a = pick("continuous", "async", variant).find((x) => x.round === s.round);
      return a ? [value(a) / value(s)] : [];
    });
    return ratios.length ? round(median(ratios), 3) : null;
  };
  const jitterSync = pick("continuous", "sync", "jitter");
  const jitterAsync = pick("continuous", "async", "jitter");
  const jitterWall: ModelRolloutResult["jitter_wall_ms"] = {};
  if (jitterSync.length) jitterWall.sync = round1(median(jitterSync.map((r) => r.wall_ms)));
  if (jitterAsync.length) jitterWall.async = round1(median(jitterAsync.map((r) => r.wall_ms)));
  return {
    benchmark: "model-rollout",
    backend,
    config: cfg,
    tokens_per_s: tokensPerS,
    speedup,
    speedup_rounds: speedupRounds,
    prefill_ratio: prefill,
    old_prefill_ratio: oldPrefill,
    async_over_sync_tokens_per_s: ratioByRound("none", (r) => r.tokens_per_s),
    jitter_async_over_sync_wall: ratioByRound("jitter", (r) => r.wall_ms),
    jitter_wall_ms: jitterWall,
    jitter_ideal_ms: latencyTables.length ? idealWallMs(latencyTables[0]!) : null,
    token_comparisons: comparisons,
    sync_async_mismatches: syncAsync,
    runs,
    decode_tokens_per_s: {},
    decode_batch_speedup: null,
    decode_runs: [],
    targets: { speedup: 3, prefill_ratio: 1.05, async_over_sync_tokens_per_s: 0.9, jitter_async_over_sync_wall: 0.8 },
  };
}
