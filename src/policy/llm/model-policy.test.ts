import { cpSync, createReadStream, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tensor } from "@huggingface/transformers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGenerationInput, byteLevelTokenizer, type GenerationOutputSpec, type TokenStepDetail } from "../../core/index.js";
import { allowedTokenIds } from "../builtin-model/index.js";
import { logSoftmax, type ModelPolicy } from "./model-policy.js";
import { loadNodeModelPolicy } from "./node.js";

const modelsRoot = mkdtempSync(join(tmpdir(), "rollout-lab-models-"));
let policy: ModelPolicy;

beforeAll(async () => {
  policy = await loadNodeModelPolicy({ model: "builtin:tiny", modelsRoot });
});
afterAll(async () => {
  await policy?.dispose();
});

const chat = (text: string) => `<|im_start|>user\n${text}<|im_end|>\n<|im_start|>assistant\n`;

function input(prompts: string[], opts: { stops?: (string[] | null)[]; maxNew?: number; maxSeqLen?: number; ids?: number[] } = {}) {
  const logs = prompts.map((p) => [{ role: "user", content: p, token_ids: byteLevelTokenizer.encode(p) }]);
  return buildGenerationInput(logs, opts.stops ?? prompts.map(() => null), {
    padTokenId: byteLevelTokenizer.padTokenId,
    maxSeqLen: opts.maxSeqLen ?? 4096,
    maxNewTokens: opts.maxNew ?? 24,
    sampleIds: opts.ids ?? prompts.map((_, i) => i),
    turns: prompts.map(() => 0),
  });
}

const generated = (out: GenerationOutputSpec, data: { input_lengths: number[] }, row = 0) =>
  Array.from(out.output_ids[row]!.subarray(data.input_lengths[row], out.unpadded_sequence_lengths[row]));
const logprobsOf = (out: GenerationOutputSpec, data: { input_lengths: number[] }, row = 0) =>
  Array.from(out.logprobs[row]!.subarray(data.input_lengths[row], out.unpadded_sequence_lengths[row]));

describe("the model policy on the built-in tiny model (Node, onnxruntime-node)", () => {
  it("uses the byte-level tokenizer's ids and special tokens", () => {
    const text = "héllo <tool_call>{\"a\": 1}</tool_call><|im_end|>";
    expect(policy.tokenizer.encode(text)).toEqual(byteLevelTokenizer.encode(text));
    expect(policy.tokenizer.eosTokenId).toBe(byteLevelTokenizer.eosTokenId);
    expect(policy.tokenizer.padTokenId).toBe(byteLevelTokenizer.padTokenId);
    expect(policy.tokenizer.decode(byteLevelTokenizer.encode(text), { skipSpecialTokens: true })).toBe("héllo <tool_call>{\"a\": 1}</tool_call>");
  });

  it("greedy generation is deterministic and only emits allowed tokens", async () => {
    const data = input([chat("Move the tile.")], { maxNew: 32 });
    const a = await policy.generate(data, true);
    const b = await policy.generate(data, true);
    expect(generated(a, data)).toEqual(generated(b, data));
    const allowed = new Set(allowedTokenIds());
    for (const id of generated(a, data)) expect(allowed.has(id)).toBe(true);
  });

  it("returns logprobs equal to a separate teacher-forced forward pass (1e-5)", async () => {
    for (const greedy of [true, false]) {
      const data = input([chat("Score me.")], { maxNew: 20 });
      const out = await policy.generate(data, greedy);
      const ids = Array.from(out.output_ids[0]!.subarray(0, out.unpadded_sequence_lengths[0]));
      const forward = (await policy.model({
        input_ids: new Tensor("int64", BigInt64Array.from(ids.map(BigInt)), [1, ids.length]),
        attention_mask: new Tensor("int64", BigInt64Array.from(ids.map(() => 1n)), [1, ids.length]),
      })) as { logits: Tensor };
      const vocab = forward.logits.dims.at(-1)!;
      const logits = forward.logits.data as Float32Array;
      const expected = generated(out, data).map((id, k) => {
        const position = data.input_lengths[0]! + k - 1;
        return logSoftmax(logits.subarray(position * vocab, (position + 1) * vocab))[id]!;
      });
      const actual = logprobsOf(out, data);
      expect(actual).toHaveLength(expected.length);
      actual.forEach((lp, k) => expect(Math.abs(lp - expected[k]!)).toBeLessThan(1e-5));
      expect(Array.from(out.logprobs[0]!.subarray(0, data.input_lengths[0]))).toEqual(new Array(data.input_lengths[0]).fill(0));
    }
  });

  it("cuts each row at its own stop string, keeping it", async () => {
    const free = input([chat("a")], { maxNew: 32 });
    const ids = generated(await policy.generate(free, true), free);
    const text = byteLevelTokenizer.decode(ids);
    // Two byte tokens in a row, the stop's first occurrence (a stop inside a marker token keeps the whole marker,
    // as engines keep the whole token).
    const k = ids.findIndex((id, i) => i > 0 && id < 256 && ids[i + 1]! < 256 && ids[i + 1] !== undefined &&
      text.indexOf(byteLevelTokenizer.decode(ids.slice(i, i + 2))) === byteLevelTokenizer.decode(ids.slice(0, i)).length);
    expect(k).toBeGreaterThan(0);
    const stop = byteLevelTokenizer.decode(ids.slice(k, k + 2));
    const data = input([chat("a"), chat("a")], { maxNew: 32, stops: [[stop], null] });
    const out = await policy.generate(data, true);
    expect(generated(out, data, 0)).toEqual(ids.slice(0, k + 2));
    expect(byteLevelTokenizer.decode(generated(out, data, 0)).endsWith(stop)).toBe(true);
    expect(generated(out, data, 1)).toEqual(ids);
    expect(out.truncated).toEqual([false, false]);
  });

  it("sets truncated when a row hits its token limit, and respects per-row limits", async () => {
    const data = input([chat("long"), chat("long")], { maxNew: 32 });
    data.max_new_tokens = [3, 32];
    const out = await policy.generate(data, true);
    expect(generated(out, data, 0)).toHaveLength(3);
    expect(out.truncated[0]).toBe(true);
    expect(generated(out, data, 0)).toEqual(generated(out, data, 1).slice(0, 3));
  });

  it("ends a row at EOS, kept in the ids", async () => {
    // Sampling finds an EOS within a few seeds: the marker bias makes it common.
    let found = false;
    for (let seed = 0; seed < 20 && !found; seed++) {
      const data = input([chat(`eos ${seed}`)], { maxNew: 64 });
      const out = await policy.generate(data, false);
      const ids = generated(out, data);
      if (ids.at(-1) === byteLevelTokenizer.eosTokenId) {
        found = true;
        expect(out.truncated[0]).toBe(false);
        expect(ids.slice(0, -1)).not.toContain(byteLevelTokenizer.eosTokenId);
      }
    }
    expect(found).toBe(true);
  });

  it("batches with left padding: each row equals its own unbatched run", async () => {
    const prompts = [chat("short"), chat("a somewhat longer prompt than the first"), chat("mid length")];
    const batched = input(prompts, { maxNew: 16 });
    const out = await policy.generate(batched, true);
    for (let i = 0; i < prompts.length; i++) {
      const alone = input([prompts[i]!], { maxNew: 16 });
      expect(generated(out, batched, i)).toEqual(generated(await policy.generate(alone, true), alone));
    }
  });

  it("seeded sampling: same sample and turn, same tokens, whatever else is in the batch", async () => {
    const a = input([chat("sample")], { maxNew: 24, ids: [5] });
    const first = generated(await policy.generate(a, false), a);
    const again = generated(await policy.generate(a, false), a);
    expect(again).toEqual(first);
    const batch = input([chat("other prompt here"), chat("sample")], { maxNew: 24, ids: [4, 5] });
    expect(generated(await policy.generate(batch, false), batch, 1)).toEqual(first);
    const otherSample = input([chat("sample")], { maxNew: 24, ids: [6] });
    expect(generated(await policy.generate(otherSample, false), otherSample)).not.toEqual(first);
  });

  it("keeps a sample's KV cache for its next turn: only the new tokens are prefilled, with the same tokens as without", async () => {
    const fresh = await loadNodeModelPolicy({ model: "builtin:tiny", modelsRoot });
    try {
      const turn1 = input([chat("turn one")], { maxNew: 12 });
      const out1 = await fresh.generate(turn1, true);
      const covered = out1.unpadded_sequence_lengths[0]! - 1; // the last generated token was never run through the model
      expect(fresh.metrics()).toEqual({ "lab/prefilled_tokens": turn1.input_lengths[0], "lab/reused_tokens": 0 });
      const history = byteLevelTokenizer.decode(Array.from(out1.output_ids[0]!.subarray(0, out1.unpadded_sequence_lengths[0])));
      const turn2Prompt = `${history}\n<|im_start|>user\nmore<|im_end|>\n<|im_start|>assistant\n`;
      const turn2 = input([turn2Prompt], { maxNew: 12 });
      const withCache = generated(await fresh.generate(turn2, true), turn2);
      expect(fresh.metrics()).toEqual({
        "lab/prefilled_tokens": turn1.input_lengths[0]! + turn2.input_lengths[0]! - covered,
        "lab/reused_tokens": covered,
      });
      // No sample ids: nothing is kept or reused.
      const { sample_ids: _ids, turns: _turns, ...uncached } = input([turn2Prompt], { maxNew: 12 });
      const other = await loadNodeModelPolicy({ model: "builtin:tiny", modelsRoot });
      expect(generated(await other.generate(uncached, true), uncached)).toEqual(withCache);
      expect(other.metrics()["lab/reused_tokens"]).toBe(0);
      await other.dispose();
    } finally {
      await fresh.dispose();
    }
  });

  it("streams each generated token as it comes", async () => {
    const data = input([chat("stream")], { maxNew: 10 });
    const streamed: number[] = [];
    const out = await policy.generate(data, true, { onToken: (row, id) => row === 0 && streamed.push(id) });
    expect(streamed).toEqual(generated(out, data));
  });

  it("streams each token's step detail: entropy and top 5 of the raw distribution, as a forward pass gives them", async () => {
    for (const greedy of [true, false]) {
      const data = input([chat("alternatives"), chat("and another row")], { maxNew: 12 });
      const details: { id: number; detail: TokenStepDetail | undefined }[] = [];
      const out = await policy.generate(data, greedy, { onToken: (row, id, _text, detail) => row === 0 && details.push({ id, detail }) });
      const ids = Array.from(out.output_ids[0]!.subarray(0, out.unpadded_sequence_lengths[0]));
      const forward = (await policy.model({
        input_ids: new Tensor("int64", BigInt64Array.from(ids.map(BigInt)), [1, ids.length]),
        attention_mask: new Tensor("int64", BigInt64Array.from(ids.map(() => 1n)), [1, ids.length]),
      })) as { logits: Tensor };
      const vocab = forward.logits.dims.at(-1)!;
      const logits = forward.logits.data as Float32Array;
      const gen = generated(out, data);
      const lps = logprobsOf(out, data);
      expect(details.map((d) => d.id)).toEqual(gen);
      details.forEach(({ id, detail }, k) => {
        const position = data.input_lengths[0]! + k - 1;
        const row = Array.from(logSoftmax(logits.subarray(position * vocab, (position + 1) * vocab)));
        const entropy = -row.reduce((s, lp) => (lp > -Infinity ? s + Math.exp(lp) * lp : s), 0);
        const best = row
          .map((logprob, tokenId) => ({ tokenId, logprob }))
          .sort((a, b) => b.logprob - a.logprob || a.tokenId - b.tokenId)
          .slice(0, 5);
        expect(detail).toBeDefined();
        expect(Math.abs(detail!.entropy - entropy)).toBeLessThan(1e-4);
        expect(detail!.top).toHaveLength(5);
        detail!.top.forEach((t, j) => {
          expect(Math.abs(t.logprob - best[j]!.logprob)).toBeLessThan(1e-5);
          expect(t.text).toBe(policy.tokenizer.tokenText(t.tokenId));
        });
        // The chosen token's own log-probability is the one in the result; when it ranks in the top 5 it is listed.
        const listed = detail!.top.find((t) => t.tokenId === id);
        if (greedy) expect(detail!.top[0]!.tokenId).toBe(id);
        if (listed) expect(Math.abs(listed.logprob - lps[k]!)).toBeLessThan(1e-6);
        else expect(lps[k]!).toBeLessThanOrEqual(detail!.top[4]!.logprob);
      });
    }
  });

  it("computes no step detail without a token listener (the output is the same either way)", async () => {
    const data = input([chat("quiet")], { maxNew: 8 });
    const quiet = await policy.generate(data, true);
    const streamed = await policy.generate(data, true, { onToken: () => {} });
    expect(generated(quiet, data)).toEqual(generated(streamed, data));
    // The second call runs on the first's kept cache: the same values up to float rounding.
    logprobsOf(streamed, data).forEach((lp, i) => expect(lp).toBeCloseTo(logprobsOf(quiet, data)[i]!, 5));
  });

  it("cancels with an AbortError", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(policy.generate(input([chat("x")]), true, { signal: controller.signal })).rejects.toMatchObject({ name: "AbortError" });
  });

  it("gives zero tokens, not truncated, when there is no room left", async () => {
    const prompt = chat("full");
    const data = input([prompt], { maxSeqLen: byteLevelTokenizer.encode(prompt).length });
    const out = await policy.generate(data, true);
    expect(out.generation_lengths).toEqual([0]);
    expect(out.truncated).toEqual([false]);
  });

  it("loads a local model folder, and names a missing file", async () => {
    const folder = join(modelsRoot, "mine", "copy");
    cpSync(join(modelsRoot, "builtin", "tiny"), folder, { recursive: true });
    const local = await loadNodeModelPolicy({ model: folder });
    const data = input([chat("local")], { maxNew: 8 });
    expect(generated(await local.generate(data, true), data)).toEqual(generated(await policy.generate(data, true), data));
    await local.dispose();
    rmSync(join(folder, "tokenizer_config.json"));
    await expect(loadNodeModelPolicy({ model: folder })).rejects.toThrow(`could not load model '${folder}' (file tokenizer_config.json): missing from ${folder}`);
  });

  it("stops at every end token of the model's generation config (Qwen3's lists <|im_end|> and <|endoftext|>), on the engine and on generate()", async () => {
    const data = input([chat("Where do I stop?")], { maxNew: 16 });
    const free = generated(await policy.generate(data, true), data);
    // A token the greedy model emits mid-answer, first at position k: named an end token, it ends the answer there.
    const k = free.findIndex((id, i) => i >= 2 && free.indexOf(id) === i && id !== byteLevelTokenizer.eosTokenId);
    expect(k).toBeGreaterThan(0);
    const folder = join(modelsRoot, "ends", "two");
    cpSync(join(modelsRoot, "builtin", "tiny"), folder, { recursive: true });
    const config = JSON.parse(readFileSync(join(folder, "generation_config.json"), "utf8"));
    writeFileSync(join(folder, "generation_config.json"), JSON.stringify({ ...config, eos_token_id: [byteLevelTokenizer.eosTokenId, free[k]] }));
    for (const engine of ["continuous", "generate"] as const) {
      const local = await loadNodeModelPolicy({ model: folder, engine });
      expect([...local.tokenizer.endTokenIds]).toEqual([byteLevelTokenizer.eosTokenId, free[k]]);
      const out = await local.generate(data, true);
      expect(generated(out, data)).toEqual(free.slice(0, k + 1));
      expect(out.truncated).toEqual([false]);
      await local.dispose();
    }
  });

  it("loads a folder's graph for each dtype transformers.js names a file for (int8, uint8, bnb4 as well as q8, q4, …)", async () => {
    // The tiny model's fp32 graph under each dtype's file name: what is checked is which file the dtype loads.
    for (const [dtype, file] of [["int8", "model_int8.onnx"], ["uint8", "model_uint8.onnx"], ["bnb4", "model_bnb4.onnx"], ["q2", "model_q2.onnx"]] as const) {
      const folder = join(modelsRoot, "dtypes", dtype);
      cpSync(join(modelsRoot, "builtin", "tiny"), folder, { recursive: true });
      renameSync(join(folder, "onnx", "model.onnx"), join(folder, "onnx", file));
      const local = await loadNodeModelPolicy({ model: folder, dtype });
      const data = input([chat(dtype)], { maxNew: 4 });
      expect(generated(await local.generate(data, true), data)).toEqual(generated(await policy.generate(data, true), data));
      await local.dispose();
      await expect(loadNodeModelPolicy({ model: folder, dtype: "q8" })).rejects.toThrow(`(file onnx/model_quantized.onnx): missing from ${folder}`);
    }
  });

  it("loads a hub id from a stand-in hub (env.remoteHost)", async () => {
    const root = join(modelsRoot, "builtin", "tiny");
    const server = createServer((req, res) => {
      const match = /^\/org\/tiny\/resolve\/main\/(.+)$/.exec(new URL(req.url!, "http://x").pathname);
      const file = match ? join(root, match[1]!) : "";
      if (!match || !existsSync(file) || !statSync(file).isFile()) return res.writeHead(404).end();
      res.writeHead(200, { "Content-Length": statSync(file).size });
      createReadStream(file).pipe(res);
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    try {
      const remoteHost = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const hub = await loadNodeModelPolicy({ model: "org/tiny", remoteHost });
      const data = input([chat("hub")], { maxNew: 8 });
      expect(generated(await hub.generate(data, true), data)).toEqual(generated(await policy.generate(data, true), data));
      await hub.dispose();
    } finally {
      server.close();
    }
  });

  it("fails to load with a message naming the problem", async () => {
    await expect(loadNodeModelPolicy({ model: "builtin:huge", modelsRoot })).rejects.toThrow("unknown built-in model 'builtin:huge'");
    await expect(loadNodeModelPolicy({ model: "builtin:tiny", dtype: "q4", modelsRoot })).rejects.toThrow(/fp32 weights only/);
    await expect(loadNodeModelPolicy({ model: join(modelsRoot, "nope", "missing") })).rejects.toThrow(/no such folder/);
  });
});
