import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { env } from "@huggingface/transformers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGenerationInput } from "../../core/index.js";
import { DEFAULT_FLOAT_TOLERANCE } from "../../regress/compare.js";
import type { RolloutResultJson } from "../../scenario/result.js";
import { runScenario, type LoadedPolicy } from "../../scenario/run.js";
import { parseScenario, type Scenario } from "../../scenario/schema.js";
import type { ModelPolicy } from "./model-policy.js";
import { loadNodeModel, loadNodeModelPolicy } from "./node.js";
import { webGpuAdapterInUse } from "./node-webgpu.js";
import { SWIFTSHADER_ICD, vulkanEnv } from "./software-vulkan.fixture.js";
import { startStandInHub } from "./stand-in-hub.fixture.js";

const vulkan = vulkanEnv();
Object.assign(process.env, vulkan);

// The example model rollout (3 samples × 3 turns) with shorter replies (the software adapter is slow), greedy: the
// adapter's logprobs differ from the CPU's by up to ~3e-4 (docs/regression.md), which moves a seeded draw that lands
// that close to a boundary of the distribution onto the neighbouring token, while greedy tokens stay the CPU's.
const example = async (): Promise<Scenario> => ({
  ...parseScenario(JSON.parse(await readFile(join(import.meta.dirname, "../../scenario/examples/sliding-puzzle-model.json"), "utf8"))),
  max_new_tokens: 16,
  greedy: true,
});

let loaded: Awaited<ReturnType<typeof loadNodeModel>>;
const policies: ModelPolicy[] = [];
const modelPolicy =
  (device: "cpu" | "webgpu") =>
  async (spec: Parameters<typeof loadNodeModelPolicy>[0]): Promise<LoadedPolicy> => {
    const policy = await loadNodeModelPolicy({ ...spec, device });
    policies.push(policy);
    return { generation: policy, tokenizer: policy.tokenizer, dispose: () => policy.dispose(), metrics: () => policy.metrics() };
  };

/** Each sample's assistant turns: tokens (compared exactly) and log-probabilities (within the regression tolerance). */
const turns = (result: RolloutResultJson) =>
  result.samples.map((sample) => sample.message_log.filter((m) => m.role === "assistant").map((m) => ({ tokens: m.token_ids, logprobs: m.generation_logprobs ?? [] })));

/** One greedy call of two rows (a prompt each) on a policy: each row's generated tokens. */
async function oneCall(policy: ModelPolicy): Promise<number[][]> {
  const prompts = ["<|im_start|>user\nSlide the 5 up.<|im_end|>\n<|im_start|>assistant\n", "<|im_start|>user\nWhich tile moves?<|im_end|>\n"];
  const logs = prompts.map((p) => [{ role: "user", content: p, token_ids: policy.tokenizer.encode(p) }]);
  const data = buildGenerationInput(logs, [null, null], { padTokenId: policy.tokenizer.padTokenId, maxSeqLen: 512, maxNewTokens: 12 });
  const out = await policy.generate(data, true);
  return out.output_ids.map((ids, row) => Array.from(ids.subarray(data.input_lengths[row], out.unpadded_sequence_lengths[row])));
}

describe.skipIf(!vulkan)("the model policy on WebGPU in Node (onnxruntime-web on Dawn)", () => {
  const cpu: Partial<Record<"sync" | "async", RolloutResultJson>> = {};
  let cpuCall: number[][];
  beforeAll(async () => {
    // The CPU's runs first: once Dawn runs on the software adapter, its threads share the CPU with onnxruntime-node's.
    const scenario = await example();
    for (const mode of ["sync", "async"] as const) cpu[mode] = await runScenario({ ...scenario, mode }, { modelPolicy: modelPolicy("cpu") });
    const onCpu = await loadNodeModelPolicy({ model: "builtin:tiny" });
    cpuCall = await oneCall(onCpu);
    await onCpu.dispose();
    loaded = await loadNodeModel({ model: "builtin:tiny", device: "webgpu" });
  }, 120_000);
  afterAll(async () => {
    for (const policy of policies) await policy.dispose();
    await loaded?.model.dispose();
  });

  it("loads the decoder onto a WebGPU adapter and names it", () => {
    expect(loaded.gpuDevice).not.toBeNull();
    expect(loaded.adapter).not.toBeNull();
    expect(webGpuAdapterInUse()).toEqual(loaded.adapter);
    if (process.env.VK_ICD_FILENAMES === SWIFTSHADER_ICD) expect(loaded.adapter!.software).toBe(true);
  });

  // The first pass compiles every kernel, which takes about half a minute on the software adapter.
  it(
    "sync and async rollouts give the CPU's tokens, with caches kept and moved on the GPU between turns",
    async () => {
      const scenario = await example();
      for (const mode of ["sync", "async"] as const) {
        const gpu = await runScenario({ ...scenario, mode }, { modelPolicy: modelPolicy("webgpu") });
        const [want, got] = [turns(cpu[mode]!), turns(gpu)];
        expect(got.map((s) => s.map((t) => t.tokens))).toEqual(want.map((s) => s.map((t) => t.tokens)));
        got.forEach((sample, i) =>
          sample.forEach((turn, j) =>
            turn.logprobs.forEach((lp, k) => expect(Math.abs(lp - want[i]![j]!.logprobs[k]!)).toBeLessThanOrEqual(DEFAULT_FLOAT_TOLERANCE)),
          ),
        );
        // Later turns were served from each sample's kept cache, as on the CPU.
        expect(gpu.metrics["lab/reused_tokens"]).toBe(cpu[mode]!.metrics["lab/reused_tokens"]);
        expect(gpu.metrics["lab/reused_tokens"]).toBeGreaterThan(0);
        const onGpu = policies.at(-1)!;
        expect(onGpu.cacheHome).toBe("gpu");
        // Rows joined one batch: kept caches were copied into it on the GPU.
        expect(onGpu.engineStats!.merges).toBeGreaterThan(0);
      }
    },
    600_000,
  );

  it("a row whose prompt extends an earlier row's whole prompt shares it as a copy (it took that row's own GPU cache, then destroyed it)", async () => {
    const policy = await loadNodeModelPolicy({ model: "builtin:tiny", device: "webgpu" });
    policies.push(policy);
    const first = "<|im_start|>user\nYou are a careful assistant. Answer in one short line.<|im_end|>\n<|im_start|>assistant\n";
    const prompts = [first, `${first}and then some more words`];
    const generate = async (texts: string[]) => {
      const logs = texts.map((p) => [{ role: "user", content: p, token_ids: policy.tokenizer.encode(p) }]);
      const data = buildGenerationInput(logs, texts.map(() => null), { padTokenId: policy.tokenizer.padTokenId, maxSeqLen: 512, maxNewTokens: 6 });
      const out = await policy.generate(data, true);
      return out.output_ids.map((ids, row) => Array.from(ids.subarray(data.input_lengths[row], out.unpadded_sequence_lengths[row])));
    };
    const shared = policy.engineStats!.sharedPrefixes;
    // Together (the second row copies the first's whole cache), and each alone: the same tokens, on the same adapter.
    const together = await generate(prompts);
    expect(policy.engineStats!.sharedPrefixes).toBe(shared + 1);
    expect(together).toEqual([(await generate([prompts[0]!]))[0], (await generate([prompts[1]!]))[0]]);
  }, 300_000);

  it("runs a hub model (the tiny model served by a stand-in hub) from the files transformers.js cached", async () => {
    const hub = await startStandInHub({ "org/tiny": join(import.meta.dirname, "../../../public/models/builtin/tiny") });
    const cacheDir = env.cacheDir;
    env.cacheDir = hub.cacheDir;
    try {
      const policy = await loadNodeModelPolicy({ model: "org/tiny", device: "webgpu", remoteHost: hub.url });
      policies.push(policy);
      expect(hub.requests).toContain("/org/tiny/resolve/main/onnx/model.onnx");
      expect(await oneCall(policy)).toEqual(cpuCall);
      expect(policy.cacheHome).toBe("gpu");
    } finally {
      env.cacheDir = cacheDir;
      await hub.close();
    }
  }, 300_000);

  it("refuses 'wasm' in Node, naming what runs there", async () => {
    await expect(loadNodeModel({ model: "builtin:tiny", device: "wasm" })).rejects.toThrow(/in Node the model runs on 'cpu' or 'webgpu'/);
  });
});
