// Its own file, so its own process: a destroyed device is gone for every WebGPU model of the process.
import { describe, expect, it } from "vitest";
import { buildGenerationInput } from "../../core/index.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import { loadNodeModel, loadNodeModelPolicy } from "./node.js";
import { vulkanEnv } from "./software-vulkan.fixture.js";

const vulkan = vulkanEnv();
Object.assign(process.env, vulkan);

describe.skipIf(!vulkan)("WebGPU in Node: a lost device", () => {
  it("fails generation and the run's samples with the reason, instead of leaving them pending", async () => {
    const policy = await loadNodeModelPolicy({ model: "builtin:tiny", device: "webgpu" });
    const { gpuDevice } = await loadNodeModel({ model: "builtin:tiny", device: "webgpu" });
    // onnxruntime-web has one device a process: destroying it is what a driver reset does to every model on it.
    (gpuDevice as unknown as { destroy(): void }).destroy();
    const text = "Slide the 5 up.";
    const data = buildGenerationInput([[{ role: "user", content: text, token_ids: policy.tokenizer.encode(text) }]], [null], {
      padTokenId: policy.tokenizer.padTokenId,
      maxSeqLen: 128,
      maxNewTokens: 4,
    });
    await expect(policy.generate(data, true)).rejects.toThrow("the WebGPU device was lost (destroyed)");

    const scenario = parseScenario({
      mode: "sync",
      max_seq_len: 1024,
      max_rollout_turns: 2,
      max_new_tokens: 4,
      greedy: true,
      envs: { puzzle: { env: "sliding_puzzle", config: {} } },
      dataset: { task_name: "puzzle", size: 2, seed: 1, config: { size: 3, shuffle_moves: 4, max_moves: 6 } },
      policy: { kind: "model", model: "builtin:tiny", device: "webgpu" },
    });
    const loaded = async () => ({ generation: policy, tokenizer: policy.tokenizer, dispose: async () => undefined });
    const result = await runScenario(scenario, { modelPolicy: loaded }).catch((e: Error) => e);
    const errors = result instanceof Error ? result.message : JSON.stringify(result.samples.map((s) => s.error));
    expect(errors).toContain("the WebGPU device was lost (destroyed)");
  }, 120_000);
});
