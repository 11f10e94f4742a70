import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildGenerationInput,
  byteLevelTokenizer,
  type GenerateOptions,
  type GenerationDatumSpec,
  type GenerationInterface,
  type GenerationOutputSpec,
} from "../../core/index.js";
import { runScenario, type LoadedPolicy } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import { ModelPolicy, type ModelPolicyOptions } from "./model-policy.js";
import { loadNodeModel } from "./node.js";

const modelsRoot = mkdtempSync(join(tmpdir(), "rollout-lab-engine-"));
let loaded: Awaited<ReturnType<typeof loadNodeModel>>;

beforeAll(async () => {
  loaded = await loadNodeModel({ model: "builtin:tiny", modelsRoot });
});
afterAll(async () => {
  await loaded?.model.dispose();
});

const policyOn = (options: ModelPolicyOptions = {}, on = loaded) => new ModelPolicy(on.runtime, on.model, on.tokenizer, options);
const chat = (text: string) => `<|im_start|>user\n${text}<|im_end|>\n<|im_start|>assistant\n`;

function input(prompts: string[], opts: { stops?: (string[] | null)[]; maxNew?: number; ids?: number[]; turn?: number } = {}) {
  const logs = prompts.map((p) => [{ role: "user", content: p, token_ids: byteLevelTokenizer.encode(p) }]);
  return buildGenerationInput(logs, opts.stops ?? prompts.map(() => null), {
    padTokenId: byteLevelTokenizer.padTokenId,
    maxSeqLen: 4096,
    maxNewTokens: opts.maxNew ?? 24,
    sampleIds: opts.ids ?? prompts.map((_, i) => i),
    turns: prompts.map(() => opts.turn ?? 0),
  });
}

const rowsOf = (out: GenerationOutputSpec, data: GenerationDatumSpec) =>
  data.input_lengths.map((len, i) => ({
    tokens: Array.from(out.output_ids[i]!.subarray(len, out.unpadded_sequence_lengths[i])),
    logprobs: Array.from(out.logprobs[i]!.subarray(len, out.unpadded_sequence_lengths[i])),
    truncated: out.truncated?.[i],
  }));

function expectSameRows(a: ReturnType<typeof rowsOf>, b: ReturnType<typeof rowsOf>): void {
  expect(a.map((r) => r.tokens)).toEqual(b.map((r) => r.tokens));
  expect(a.map((r) => r.truncated)).toEqual(b.map((r) => r.truncated));
  a.forEach((row, i) => row.logprobs.forEach((lp, k) => expect(lp).toBeCloseTo(b[i]!.logprobs[k]!, 5)));
}

/** A policy whose calls run one at a time: each row alone in the engine. */
function oneAtATime(inner: GenerationInterface): GenerationInterface {
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(call: () => Promise<T>): Promise<T> => {
    const run = queue.then(call);
    queue = run.catch(() => undefined);
    return run;
  };
  return {
    generate: (data, greedy, options) => serial(() => inner.generate(data, greedy, options)),
    generateAsync: (data, greedy, options) => {
      const rows = serial(async () => {
        const out: [number, GenerationOutputSpec][] = [];
        for await (const row of inner.generateAsync!(data, greedy, options)) out.push(row);
        return out;
      });
      return (async function* () {
        yield* await rows;
      })();
    },
    releaseSamples: (ids) => inner.releaseSamples?.(ids),
  };
}

describe("the decode engine (builtin:tiny, onnxruntime-node)", () => {
  it("gives the tokens and log-probabilities transformers.js's generate() gives, greedy and seeded, per row", async () => {
    const prompts = [chat("Move the tile."), chat("a much longer prompt than the first one, to pad"), chat("x")];
    for (const greedy of [true, false]) {
      const data = input(prompts, { maxNew: 20, stops: [null, ["e"], null] });
      const sampling = { temperature: 1, top_p: 0.95, seed: 7 };
      const engine = policyOn(sampling);
      const reference = policyOn({ ...sampling, engine: "generate" });
      expect(engine.backend).toBe("continuous");
      expect(reference.backend).toBe("generate");
      const appended = engine.engineStats!.appendSteps;
      expectSameRows(rowsOf(await engine.generate(data, greedy), data), rowsOf(await reference.generate(data, greedy), data));
      // The built-in decoder offers its new positions' keys and values: every decode step appended them.
      expect(engine.engineStats!.appendSteps - appended).toBeGreaterThan(0);
      await engine.dispose();
      await reference.dispose();
    }
  });

  it("gives the same tokens fetching the whole present cache each step (hub models, WebGPU) as appending the new positions", async () => {
    const own = await loadNodeModel({ model: "builtin:tiny", modelsRoot });
    try {
      const prompts = [chat("Move the tile."), chat("a much longer prompt than the first one, to pad"), chat("x")];
      const data = input(prompts, { maxNew: 20, stops: [null, ["e"], null] });
      const present = policyOn({ seed: 3, engineOptions: { appendMode: false } }, own);
      const appended = policyOn({ seed: 3 });
      for (const greedy of [true, false]) expectSameRows(rowsOf(await present.generate(data, greedy), data), rowsOf(await appended.generate(data, greedy), data));
      expect(present.engineStats!.decodeSteps).toBeGreaterThan(0);
      expect(present.engineStats!.appendSteps).toBe(0);
      await present.dispose();
      await appended.dispose();
    } finally {
      await own.model.dispose();
    }
  });

  it("runs concurrent calls (a fork's rollout beside the main one) in one batch, each row as it would run alone", async () => {
    const main = policyOn({ seed: 1 });
    const fork = policyOn({ seed: 1 });
    const a = input([chat("the main run's sample")], { maxNew: 24, ids: [0] });
    const b = input([chat("the fork's sample, a longer prompt")], { maxNew: 24, ids: [0] });
    const steps = main.engineStats!.decodeSteps;
    const rows = main.engineStats!.stepRows;
    const [outA, outB] = await Promise.all([main.generate(a, false), fork.generate(b, false)]);
    const stepped = main.engineStats!.decodeSteps - steps;
    // Some steps carried both rows.
    expect(main.engineStats!.stepRows - rows).toBeGreaterThan(stepped);
    const aloneA = policyOn({ seed: 1 });
    const aloneB = policyOn({ seed: 1 });
    expectSameRows(rowsOf(outA, a), rowsOf(await aloneA.generate(a, false), a));
    expectSameRows(rowsOf(outB, b), rowsOf(await aloneB.generate(b, false), b));
    for (const p of [main, fork, aloneA, aloneB]) await p.dispose();
  });

  it("a request that arrives while a batch runs takes a row that left, written in place, with the tokens it gets alone", async () => {
    const policy = policyOn({ seed: 2 });
    const first = input([chat("a row that stops early"), chat("a row that runs on and on"), chat("another long runner")], { maxNew: 40, ids: [0, 1, 2] });
    first.max_new_tokens[0] = 3;
    const late = input([chat("late")], { maxNew: 16, ids: [9] });
    const before = policy.engineStats!.joinsInPlace;
    let lateOut: Promise<GenerationOutputSpec> | null = null;
    let seen = 0;
    const out = await policy.generate(first, false, {
      onToken: (row) => {
        // Row 0's last token: it leaves the batch; the late call is admitted before the next step.
        if (row === 0 && ++seen === 3) lateOut = policy.generate(late, false);
      },
    });
    const lateRows = rowsOf(await lateOut!, late);
    expect(policy.engineStats!.joinsInPlace - before).toBe(1);
    const alone = policyOn({ seed: 2 });
    expectSameRows(lateRows, rowsOf(await alone.generate(late, false), late));
    const { sample_ids: _s, turns: _t, ...firstAgain } = first;
    expectSameRows(rowsOf(out, first), rowsOf(await alone.generate({ ...firstAgain, sample_ids: [0, 1, 2] }, false), first));
    await policy.dispose();
    await alone.dispose();
  });

  it("reuses the longest common prefix of a sample's cache when its next prompt differs after it", async () => {
    const policy = policyOn();
    const first = input([chat("the same beginning, then one ending")], { maxNew: 6, ids: [3] });
    await policy.generate(first, true);
    const shared = byteLevelTokenizer.encode("<|im_start|>user\nthe same beginning, ").length;
    const second = input([chat("the same beginning, but another ending")], { maxNew: 12, ids: [3], turn: 1 });
    const before = policy.metrics();
    const out = await policy.generate(second, true);
    const reused = policy.metrics()["lab/reused_tokens"]! - before["lab/reused_tokens"]!;
    expect(reused).toBeGreaterThanOrEqual(shared);
    expect(reused).toBeLessThan(second.input_lengths[0]!);
    const uncached = policyOn();
    const { sample_ids: _s, turns: _t, ...noIds } = second;
    expectSameRows(rowsOf(out, second), rowsOf(await uncached.generate(noIds, true), noIds));
    await policy.dispose();
    await uncached.dispose();
  });

  it("rows of one call share their prompts' common prefix: run once, copied, with the same tokens as each row alone", async () => {
    const system = "You are a careful assistant. Answer in one short line, and never more than that. ".repeat(2);
    const prompts = ["first", "second question", "third"].map((q) => chat(system + q));
    const data = input(prompts, { maxNew: 12 });
    const policy = policyOn();
    const before = policy.engineStats!.sharedPrefixes;
    const out = await policy.generate(data, true);
    expect(policy.engineStats!.sharedPrefixes - before).toBe(2);
    const sharedLength = byteLevelTokenizer.encode(`<|im_start|>user\n${system}`).length;
    expect(policy.metrics()["lab/reused_tokens"]).toBeGreaterThanOrEqual(2 * sharedLength);
    const alone = await Promise.all(
      prompts.map(async (p, i) => {
        const { sample_ids: _s, turns: _t, ...one } = input([p], { maxNew: 12, ids: [i] });
        const fresh = policyOn();
        const rows = rowsOf(await fresh.generate(one, true), one);
        await fresh.dispose();
        return rows[0]!;
      }),
    );
    expectSameRows(rowsOf(out, data), alone);
    await policy.dispose();
  });

  it("a cancelled call rejects and the engine goes on serving the next", async () => {
    const policy = policyOn();
    const controller = new AbortController();
    const data = input([chat("cancel me")], { maxNew: 64 });
    let tokens = 0;
    const options: GenerateOptions = {
      signal: controller.signal,
      onToken: () => {
        if (++tokens === 3) controller.abort();
      },
    };
    await expect(policy.generate(data, true, options)).rejects.toMatchObject({ name: "AbortError" });
    const next = input([chat("next")], { maxNew: 8 });
    expect((await policy.generate(next, true)).generation_lengths[0]).toBeGreaterThan(0);
    await policy.dispose();
  });

  it("a call whose token callback throws mid-decode fails alone: a call in the same batch ends as it would alone", async () => {
    const policy = policyOn();
    const failing = input([chat("my listener throws")], { maxNew: 24, ids: [0] });
    const other = input([chat("an innocent call beside it")], { maxNew: 24, ids: [1] });
    const solo = policyOn();
    const alone = rowsOf(await solo.generate(other, true), other);
    // Its kept cache is freed: the engine is shared by every policy on the model, and later tests count its caches.
    await solo.dispose();
    let tokens = 0;
    const options: GenerateOptions = {
      onToken: () => {
        // Past the prefill's first token: the throw comes inside a decode step.
        if (++tokens === 3) throw new Error("a listener failed");
      },
    };
    const [bad, good] = await Promise.allSettled([policy.generate(failing, true, options), policy.generate(other, true)]);
    expect(bad).toMatchObject({ status: "rejected", reason: { message: "a listener failed" } });
    expect(good.status).toBe("fulfilled");
    expectSameRows(rowsOf((good as PromiseFulfilledResult<GenerationOutputSpec>).value, other), alone);
    // And the engine serves later calls.
    expect((await policy.generate(input([chat("next")], { maxNew: 8, ids: [2] }), true)).generation_lengths[0]).toBeGreaterThan(0);
    await policy.dispose();
  });
});

const puzzle = (mode: "sync" | "async", policy: Record<string, unknown>) =>
  parseScenario({
    mode,
    max_seq_len: 4096,
    max_rollout_turns: 3,
    max_new_tokens: 24,
    greedy: policy.greedy === true,
    envs: { puzzle: { env: "sliding_puzzle", config: {} } },
    dataset: { task_name: "puzzle", size: 4, seed: 2, config: { size: 3, shuffle_moves: 6, max_moves: 10 } },
    policy: { kind: "model", model: "builtin:tiny", ...(policy.greedy ? {} : { temperature: 1, top_p: 0.9, seed: 5 }) },
  });

async function rollout(
  mode: "sync" | "async",
  greedy: boolean,
  wrap: (g: GenerationInterface) => GenerationInterface = (g) => g,
  options: ModelPolicyOptions = {},
  on = loaded,
) {
  let policy: ModelPolicy | null = null;
  let keptAtEnd = -1;
  const result = await runScenario(puzzle(mode, { greedy }), {
    modelPolicy: async (spec): Promise<LoadedPolicy> => {
      policy = policyOn({ ...spec, ...options }, on);
      const p = policy;
      return {
        generation: wrap(p),
        tokenizer: p.tokenizer,
        metrics: () => p.metrics(),
        dispose: async () => {
          keptAtEnd = p.keptCaches!.kept;
          await p.dispose();
        },
      };
    },
  });
  const turns = result.samples.map((s) => s.message_log.filter((m) => m.role === "assistant").map((m) => m.token_ids));
  return { result, turns, keptAtEnd, policy: policy! };
}

describe("model rollouts on the decode engine", () => {
  for (const greedy of [true, false]) {
    it(`async tokens = sync tokens = one-at-a-time tokens (${greedy ? "greedy" : "seeded sampling"})`, async () => {
      const sync = await rollout("sync", greedy);
      const async_ = await rollout("async", greedy);
      const serial = await rollout("async", greedy, oneAtATime);
      expect(async_.turns).toEqual(serial.turns);
      // The async path may end a sample on a truncated response where sync goes on: its turns are sync's first ones.
      async_.turns.forEach((turns, i) => expect(sync.turns[i]!.slice(0, turns.length)).toEqual(turns));
      expect(async_.turns.flat().length).toBeGreaterThan(4);
    });
  }

  it("prefills only what is new in each turn's prompt and frees each sample's cache when it ends", async () => {
    for (const mode of ["sync", "async"] as const) {
      const { result, keptAtEnd } = await rollout(mode, true);
      let prompts = 0;
      let fresh = 0;
      let turns = 0;
      const firstPrompts: number[] = [];
      for (const sample of result.samples) {
        let seen = 0;
        let context = 0;
        for (const m of sample.message_log) {
          if (m.role === "assistant") {
            if (seen === 0) firstPrompts.push(context);
            prompts += context;
            fresh += context - seen;
            turns += 1;
            seen = context + m.token_ids.length;
          }
          context += m.token_ids.length;
        }
      }
      const { "lab/prefilled_tokens": prefilled, "lab/reused_tokens": reused } = result.metrics as Record<string, number>;
      expect(prefilled! + reused!).toBe(prompts);
      // Each later turn also runs the previous turn's last token, which was sampled but never fed back.
      const ownOnly = fresh + turns - result.samples.length;
      // The first turns (a sync turn's rows; an async rollout's first turns, each a call of its own) share their
      // prompts' common prefix (the puzzle's instructions): run once, then copied.
      expect(prefilled).toBeLessThan(ownOnly);
      const firstTotal = firstPrompts.reduce((a, b) => a + b, 0);
      const later = ownOnly - firstTotal;
      if (mode === "async") {
        // Later turns are asked one sample at a time and share nothing: exactly their own new tokens.
        expect(prefilled! - later).toBeLessThan(firstTotal);
        expect(prefilled! - later).toBeGreaterThanOrEqual(Math.max(...firstPrompts));
      }
      expect({ mode, keptAtEnd }).toEqual({ mode, keptAtEnd: 0 });
    }
  });

  it("under a tiny cache budget evicts every cache, prefills each turn whole, and gives the same tokens", async () => {
    const roomy = await rollout("sync", true);
    // The engine is the model's, made with the first policy's options: a model of its own for this budget.
    const own = await loadNodeModel({ model: "builtin:tiny", modelsRoot });
    try {
      const tight = await rollout("sync", true, (g) => g, { engineOptions: { cacheBudgetBytes: 1 } }, own);
      expect(tight.turns).toEqual(roomy.turns);
      // Nothing kept from turn to turn: only what a sync turn's rows share within the call is reused.
      expect(tight.result.metrics["lab/reused_tokens"]).toBeLessThan(roomy.result.metrics["lab/reused_tokens"] as number);
      expect(tight.policy.keptCaches!.evictions).toBeGreaterThan(0);
    } finally {
      await own.model.dispose();
    }
  });
});
