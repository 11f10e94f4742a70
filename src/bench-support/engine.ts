/**
 * Benchmark 1, engine overhead: a rollout of the oracle policy on the sliding puzzle (the real
 * `runMultiTurnRollout`, and `runAsyncMultiTurnRollout` beside it) against a bare loop that makes the same oracle
 * calls, the same environment steps and the same tokenizer calls on the same texts, without the engine.
 *
 * The bare loop, per sample and turn: the oracle solver on the context text (kept as a string, appended to), with
 * the same seeded generator the oracle policy uses; the engine-like cut and encoding of its answer
 * (`textToGeneration`) and the decoding of those ids into the message content; one batched `step` per turn over
 * the samples still running (as the sync path does); the encoding of each observation; the rewards, turn counts,
 * stop strings and metadata carried to the next turn; and the same message logs (content, token ids, logprobs) as
 * the rollout's result. What it leaves out is the engine: the token-id prompt the policy interface is given (and
 * the text policy decoding it back), the copies of inputs and of what crosses into the environment, the
 * assessment, the events and the result batch with its metrics.
 *
 * A fifth contender, "bare, sample steps", is the bare loop stepping each sample in a `step` call of its own, as the
 * async path must (one `step` per sample per turn, D2): the environment's own cost per call (its return's lists, its
 * per-call setup) is then in the reference too, so the async path's ratio to it is what the engine adds.
 *
 * A fourth contender, "bare + rows", is the bare loop that also builds, each turn, what the generation interface
 * passes whatever the engine does, as cheaply as the engine does it: every running sample's context as a row of
 * token ids padded to the batch's widest (views of each sample's kept context, `ContextRows`, as the rollouts hand
 * them), and the answer row of each (prompt and response, padded) written into a buffer kept per sample, as the text
 * policy does; both held to the end of the turn as a batched call holds them. It does nothing with them: its time
 * over the bare loop's is what that interface costs by itself.
 *
 * Each contender's tokenizer, oracle solver and environment are wrapped in counters, and its transcript is hashed:
 * the benchmark fails unless every contender made the same number of oracle calls, sample steps and encode calls
 * (with the same token total) and produced the same transcripts, rewards and turn counts.
 */

import {
  buildGenerationInput,
  byteLevelTokenizer,
  ContextRows,
  Rng,
  runAsyncMultiTurnRollout,
  runMultiTurnRollout,
  structuredDecodeSkipSpecial,
  type BatchedDataDict,
  type EnvironmentInterface,
  type EnvironmentReturn,
  type EnvMessage,
  type GenerationDatumSpec,
  type Message,
  type Metadata,
  type TokenizerInterface,
} from "../core/index.js";
import type { DatasetDatum } from "../envs/types.js";
import { SlidingPuzzleEnv } from "../envs/sliding-puzzle/index.js";
import { oraclePolicy, type OracleSolver } from "../policy/oracle/index.js";
import { slidingPuzzleOracle } from "../policy/oracle/sliding-puzzle.js";
import { textToGeneration } from "../policy/text-policy.js";
import {
  countingEnv,
  countingSolver,
  countingTokenizer,
  hashText,
  inputBatchOf,
  median,
  PUZZLE_TASK,
  puzzleData,
  round,
  zeroCounts,
  type PuzzleBatchConfig,
  type WorkCounts,
} from "./common.js";

export interface EngineBenchConfig extends PuzzleBatchConfig {
  /** `max_rollout_turns`. */
  turns: number;
  /** The oracle's mistake rate: mistakes cost turns, so most samples are still running at the last turn. */
  errorRate: number;
  oracleSeed: number;
  maxSeqLen: number;
}

/**
 * 1,024 3×3 boards shuffled by 101 random blank moves (17 moves from solved on average), an oracle that errs on
 * half its turns (a turn without an action, a wrong move, or malformed thinking that still moves) and 30 turns:
 * most samples use all 30 turns, and the oracle's search stays cheap (a fraction of a millisecond), so the figure
 * is about the engine rather than the solver.
 */
export const ENGINE_BENCH_DEFAULTS: EngineBenchConfig = {
  samples: 1024,
  turns: 30,
  side: 3,
  shuffleMoves: 101,
  maxMoves: 30,
  seed: 1,
  errorRate: 0.5,
  oracleSeed: 0,
  maxSeqLen: 8192,
};

export type Contender = "bare" | "bare+rows" | "bare-sample-steps" | "sync" | "async";

/** What a run produced, to check that the contenders did the same thing. */
export interface RunSummary {
  turns: number[];
  total_reward: number;
  terminations: Record<string, number>;
  /** One hash over every message's role, content, token ids and logprobs, sample by sample. */
  transcript_hash: number;
}

export interface RunOutcome {
  contender: Contender;
  ms: number;
  counts: WorkCounts;
  summary: RunSummary;
}

interface Fixture {
  cfg: EngineBenchConfig;
  data: DatasetDatum[];
  batch: BatchedDataDict;
}

export function engineFixture(cfg: EngineBenchConfig): Fixture {
  const data = puzzleData(cfg);
  return { cfg, data, batch: inputBatchOf(data, byteLevelTokenizer) };
}

function summarize(logs: readonly (readonly Message[])[], rewards: readonly number[], turns: number[], terminations: readonly string[]): RunSummary {
  let h = 0x811c9dc5;
  for (const log of logs) {
    for (const m of log) {
      h = hashText(`${m.role}\u0000${m.content}\u0000${m.token_ids.join(",")}\u0000${(m.generation_logprobs ?? []).join(",")}\u0001`, h);
    }
    h = hashText("\u0002", h);
  }
  const byReason: Record<string, number> = {};
  for (const t of terminations) byReason[t] = (byReason[t] ?? 0) + 1;
  return { turns, total_reward: rewards.reduce((a, b) => a + b, 0), terminations: byReason, transcript_hash: h };
}

/** The real rollout, sync or async, with the oracle policy; the input batch is built beforehand (untimed). */
export async function runEngine(fixture: Fixture, mode: "sync" | "async"): Promise<RunOutcome> {
  const { cfg, batch } = fixture;
  const counts = zeroCounts();
  const tokenizer = countingTokenizer(byteLevelTokenizer, counts);
  const policy = oraclePolicy(tokenizer, {
    seed: cfg.oracleSeed,
    errorRate: cfg.errorRate,
    solvers: [countingSolver(slidingPuzzleOracle, counts)],
  });
  const env = countingEnv(new SlidingPuzzleEnv(), counts);
  const run = mode === "sync" ? runMultiTurnRollout : runAsyncMultiTurnRollout;
  const started = performance.now();
  const [out] = await run({
    policyGeneration: policy,
    tokenizer,
    taskToEnv: { [PUZZLE_TASK]: env },
    inputBatch: batch,
    maxSeqLen: cfg.maxSeqLen,
    maxRolloutTurns: cfg.turns,
  });
  const ms = performance.now() - started;
  const logs = out.get("message_log") as Message[][];
  const turns = logs.map((log) => log.filter((m) => m.role === "assistant").length);
  const summary = summarize(logs, out.get("total_reward") as number[], turns, out.get("termination") as string[]);
  return { contender: mode, ms, counts, summary };
}

export interface BareLoopParts {
  tokenizer: TokenizerInterface;
  solvers: readonly OracleSolver[];
  env: EnvironmentInterface;
  /** Also build each turn's generation input and output rows (the "bare + rows" contender). */
  rows?: boolean;
  /** Step each sample in a `step` call of its own, as the async path does (the "bare, sample steps" contender). */
  sampleSteps?: boolean;
}

/** The bare loop (see the top of this file). Returns each sample's message log, total reward, turns and ending. */
export async function bareLoop(
  cfg: EngineBenchConfig,
  data: readonly DatasetDatum[],
  batch: BatchedDataDict,
  parts: BareLoopParts,
): Promise<{ logs: Message[][]; rewards: number[]; turns: number[]; terminations: string[] }> {
  const { tokenizer, solvers, env } = parts;
  const skipSpecialTokens = structuredDecodeSkipSpecial(null, tokenizer);
  const B = data.length;
  const promptLogs = batch.get("message_log") as Message[][];
  const logs = promptLogs.map((log) => [...log]);
  const envLogs: EnvMessage[][] = data.map((d) => d.message_log.map((m) => ({ role: m.role, content: m.content })));
  const contexts = data.map((d) => d.message_log.map((m) => m.content).join(""));
  const lengths = promptLogs.map((log) => log.reduce((n, m) => n + m.token_ids.length, 0));
  const infos: Metadata[] = data.map((d) => d.extra_env_info);
  const stops = data.map((d) => d.stop_strings);
  const rewards = new Array<number>(B).fill(0);
  const turns = new Array<number>(B).fill(0);
  const terminations = new Array<string>(B).fill("max_turns");

  const keptContexts = parts.rows ? new ContextRows(tokenizer.padTokenId) : null;
  const answers = new Map<number, Int32Array>();
  let active = Array.from({ length: B }, (_, i) => i);
  for (let turn = 0; turn < cfg.turns && active.length > 0; turn++) {
    // "bare + rows": the interface's rows, built and held for the turn, never read.
    const input = keptContexts
      ? buildGenerationInput(active.map((g) => logs[g]!), active.map((g) => stops[g]!), {
          padTokenId: tokenizer.padTokenId,
          maxSeqLen: cfg.maxSeqLen,
          sampleIds: active,
          contexts: keptContexts,
        })
      : null;
    const generated: number[][] = [];
    for (const g of active) {
      const promptText = contexts[g]!;
      const solver = solvers.find((s) => s.matches(promptText));
      if (!solver) throw new Error("the oracle does not recognise this task's environment");
      const text = solver.respond({ promptText, stopStrings: stops[g]!, rng: Rng.derive(cfg.oracleSeed, g, turn), errorRate: cfg.errorRate });
      const { ids } = textToGeneration(text, stops[g]!, Math.max(0, cfg.maxSeqLen - lengths[g]!), tokenizer);
      if (input) generated.push(ids);
      const content = tokenizer.decode(ids, { skipSpecialTokens });
      logs[g]!.push({ role: "assistant", content, token_ids: ids, generation_logprobs: new Array<number>(ids.length).fill(0) });
      envLogs[g]!.push({ role: "assistant", content });
      contexts[g] += skipSpecialTokens ? tokenizer.decode(ids) : content;
      lengths[g]! += ids.length;
    }
    const outputRows = input ? answerRows(input, active, generated, answers, tokenizer.padTokenId) : null;
    // Each sample's share of the turn's step: its return and its place in it.
    const rets: { ret: EnvironmentReturn; j: number }[] = [];
    if (parts.sampleSteps) for (const g of active) rets.push({ ret: await env.step([envLogs[g]!], [infos[g]!]), j: 0 });
    else {
      const ret = await env.step(active.map((g) => envLogs[g]!), active.map((g) => infos[g]!));
      active.forEach((_, j) => rets.push({ ret, j }));
    }
    const next: number[] = [];
    active.forEach((g, k) => {
      const { ret, j } = rets[k]!;
      const observation = ret.observations[j]!;
      let ids = tokenizer.encode(observation.content);
      const truncated = ids.length + lengths[g]! >= cfg.maxSeqLen;
      if (truncated) ids = ids.slice(0, Math.max(0, cfg.maxSeqLen - lengths[g]!));
      logs[g]!.push({ role: observation.role, content: observation.content, token_ids: ids });
      envLogs[g]!.push({ role: observation.role, content: observation.content });
      contexts[g] += observation.content;
      lengths[g]! += ids.length;
      rewards[g]! += (ret.rewards as number[])[j]!;
      turns[g]! += 1;
      const terminated = ret.terminateds[j]!;
      if (terminated || truncated) {
        terminations[g] = terminated ? "terminated" : "truncated_context";
        return;
      }
      stops[g] = ret.next_stop_strings?.[j] ?? null;
      const metadata = ret.metadata[j] ?? null;
      if (metadata !== null) infos[g] = metadata;
      next.push(g);
    });
    active = next;
    void outputRows;
  }
  return { logs, rewards, turns, terminations };
}

/**
 * The answer rows of a batched generation: each prompt and its response, right-padded to the widest, written into a
 * buffer kept per sample (as the text policy writes them).
 */
function answerRows(input: GenerationDatumSpec, samples: number[], generated: number[][], kept: Map<number, Int32Array>, padId: number): Int32Array[] {
  const lengths = input.input_lengths;
  let width = 0;
  lengths.forEach((n, i) => (width = Math.max(width, n + generated[i]!.length)));
  return input.input_ids.map((prompt, i) => {
    let row = kept.get(samples[i]!);
    if (!row || row.length < width) kept.set(samples[i]!, (row = new Int32Array(Math.max(width, 2 * (row?.length ?? 0), 256))));
    row.set(prompt.subarray(0, lengths[i]!));
    row.set(generated[i]!, lengths[i]!);
    row.fill(padId, lengths[i]! + generated[i]!.length, width);
    return row.subarray(0, width);
  });
}

export async function runBare(fixture: Fixture, contender: "bare" | "bare+rows" | "bare-sample-steps" = "bare"): Promise<RunOutcome> {
  const { cfg, data, batch } = fixture;
  const counts = zeroCounts();
  const parts: BareLoopParts = {
    tokenizer: countingTokenizer(byteLevelTokenizer, counts),
    solvers: [countingSolver(slidingPuzzleOracle, counts)],
    env: countingEnv(new SlidingPuzzleEnv(), counts),
    rows: contender === "bare+rows",
    sampleSteps: contender === "bare-sample-steps",
  };
  const started = performance.now();
  const result = await bareLoop(cfg, data, batch, parts);
  const ms = performance.now() - started;
  return { contender, ms, counts, summary: summarize(result.logs, result.rewards, result.turns, result.terminations) };
}

/** Throws unless `run` did the work `reference` did and produced the same transcripts. */
export function checkSameWork(reference: RunOutcome, run: RunOutcome): void {
  const problems: string[] = [];
  for (const key of ["oracle_calls", "env_sample_steps", "encode_calls", "encoded_tokens"] as const) {
    if (run.counts[key] !== reference.counts[key]) problems.push(`${key}: ${run.counts[key]} vs ${reference.counts[key]}`);
  }
  const a = run.summary;
  const b = reference.summary;
  if (a.transcript_hash !== b.transcript_hash) problems.push("the transcripts differ");
  if (a.total_reward !== b.total_reward) problems.push(`total reward ${a.total_reward} vs ${b.total_reward}`);
  if (a.turns.join() !== b.turns.join()) problems.push("the turns per sample differ");
  if (JSON.stringify(a.terminations) !== JSON.stringify(b.terminations)) {
    problems.push(`terminations ${JSON.stringify(a.terminations)} vs ${JSON.stringify(b.terminations)}`);
  }
  if (problems.length) throw new Error(`${run.contender} did not do the work ${reference.contender} did: ${problems.join("; ")}`);
}

export interface EngineBenchResult {
  benchmark: "engine-overhead";
  config: EngineBenchConfig;
  rounds: number;
  /** Sample-turns run (oracle calls), and what they amount to. */
  sample_turns: number;
  mean_turns_per_sample: number;
  /** Share of samples that used every turn (still running at the last one). */
  share_running_at_last_turn: number;
  terminations: Record<string, number>;
  /** What each contender did (the first round's; every round is checked). */
  counts: Partial<Record<Contender, WorkCounts>>;
  /** Median wall time of each contender over the rounds. */
  ms: Partial<Record<Contender, number>>;
  /** Target ≤ 1.3. */
  sync_over_bare: number;
  /** Against the bare loop with batched steps, and against the one stepping each sample on its own (as async does). */
  async_over_bare?: number;
  async_over_bare_sample_steps?: number;
  /** What stepping each sample on its own costs the environment (the bare loops' ratio). */
  sample_steps_over_bare?: number;
  /** The interface's own cost (see the top of engine.ts): the floor under either path's ratio. */
  rows_over_bare: number;
  /** Per round, for the spread. */
  rounds_ms: Partial<Record<Contender, number>>[];
  target: number;
}

export interface EngineBenchOptions {
  config?: Partial<EngineBenchConfig>;
  rounds?: number;
  /** Also time the async path (same work, one `step` per sample). */
  includeAsync?: boolean;
  /** Called between runs (e.g. to collect garbage) so one contender's garbage is not collected in another's time. */
  between?: () => void;
  log?: (line: string) => void;
}

export async function runEngineBenchmark(options: EngineBenchOptions = {}): Promise<EngineBenchResult> {
  const cfg = { ...ENGINE_BENCH_DEFAULTS, ...options.config };
  const rounds = options.rounds ?? 3;
  const includeAsync = options.includeAsync ?? true;
  const between = options.between ?? (() => {});
  const log = options.log ?? (() => {});
  const fixture = engineFixture(cfg);

  const contenders: Contender[] = ["bare", "bare+rows", "sync", ...(includeAsync ? (["bare-sample-steps", "async"] as const) : [])];
  const run = (c: Contender, f: Fixture) => (c === "sync" || c === "async" ? runEngine(f, c) : runBare(f, c));
  // Warm-up at a small size: the first calls compile.
  const small = engineFixture({ ...cfg, samples: Math.min(cfg.samples, 32), turns: Math.min(cfg.turns, 5) });
  for (const c of contenders) await run(c, small);

  const perRound: Partial<Record<Contender, RunOutcome>>[] = [];
  for (let r = 0; r < rounds; r++) {
    // The order rotates so that no contender always runs first (or after the same one).
    const order = contenders.map((_, i) => contenders[(i + r) % contenders.length]!);
    const outcomes: Partial<Record<Contender, RunOutcome>> = {};
    for (const c of order) {
      between();
      const outcome = await run(c, fixture);
      outcomes[c] = outcome;
      log(`round ${r + 1}/${rounds}: ${c} ${round(outcome.ms)} ms`);
    }
    for (const c of contenders) if (c !== "bare") checkSameWork(outcomes.bare!, outcomes[c]!);
    perRound.push(outcomes);
  }

  const first = perRound[0]!;
  const bare = first.bare!.summary;
  const ms = (c: Contender) => median(perRound.map((o) => o[c]!.ms));
  const sampleTurns = first.bare!.counts.oracle_calls;
  return {
    benchmark: "engine-overhead",
    config: cfg,
    rounds,
    sample_turns: sampleTurns,
    mean_turns_per_sample: round(sampleTurns / cfg.samples, 2),
    share_running_at_last_turn: round(bare.turns.filter((t) => t === cfg.turns).length / cfg.samples, 3),
    terminations: bare.terminations,
    counts: Object.fromEntries(contenders.map((c) => [c, first[c]!.counts])),
    ms: Object.fromEntries(contenders.map((c) => [c, round(ms(c))])),
    sync_over_bare: round(ms("sync") / ms("bare"), 3),
    ...(includeAsync
      ? {
          async_over_bare: round(ms("async") / ms("bare"), 3),
          async_over_bare_sample_steps: round(ms("async") / ms("bare-sample-steps"), 3),
          sample_steps_over_bare: round(ms("bare-sample-steps") / ms("bare"), 3),
        }
      : {}),
    rows_over_bare: round(ms("bare+rows") / ms("bare"), 3),
    rounds_ms: perRound.map((o) => Object.fromEntries(contenders.map((c) => [c, round(o[c]!.ms)]))),
    target: 1.3,
  };
}
