/**
 * The decode engine frees every GPU cache it made when a request ends otherwise than by finishing: its caller's token
 * callback threw (at the first token, in the prefill, or later, in a decode step), or its policy was disposed while
 * rows of a call its caller gave up on still ran. On the CPU a lost cache is garbage-collected; on WebGPU its buffers
 * stay allocated, so this runs on WebGPU in Node (Dawn; the software adapter where there is no GPU), counting the
 * decoder's GPU outputs not yet disposed and the engine's own buffers not yet destroyed.
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { GenerateOptions, GenerationDatumSpec } from "../../core/index.js";
import { ModelPolicy } from "./model-policy.js";
import { loadNodeModel } from "./node.js";
import { vulkanEnv } from "./software-vulkan.fixture.js";

const vulkan = vulkanEnv();
Object.assign(process.env, vulkan ?? {});

type Loaded = Awaited<ReturnType<typeof loadNodeModel>>;
const live = new Set<object>();
let gpu: Loaded;

/** The model on WebGPU, its session's GPU outputs and the cache copies' buffers counted while alive. */
async function loadCounted(): Promise<Loaded> {
  const loaded = await loadNodeModel({ model: "builtin:tiny", modelsRoot: mkdtempSync(join(tmpdir(), "rollout-lab-leaks-")), device: "webgpu" });
  const device = loaded.gpuDevice as unknown as { createBuffer(d: unknown): { destroy(): void } };
  const create = device.createBuffer.bind(device);
  device.createBuffer = (d: unknown) => {
    const buffer = create(d);
    if ((new Error().stack ?? "").includes("cache-ops")) {
      live.add(buffer);
      const destroy = buffer.destroy.bind(buffer);
      buffer.destroy = () => {
        live.delete(buffer);
        destroy();
      };
    }
    return buffer;
  };
  const session = (loaded.model as unknown as { sessions: { model: { run(f: unknown, o: unknown): Promise<Record<string, { location: string; dispose(): void }>> } } }).sessions.model;
  const run = session.run.bind(session);
  session.run = async (feeds: unknown, options: unknown) => {
    const out = await run(feeds, options);
    for (const t of Object.values(out)) {
      if (t.location !== "gpu-buffer") continue;
      live.add(t);
      const dispose = t.dispose.bind(t);
      t.dispose = () => {
        live.delete(t);
        dispose();
      };
    }
    return out;
  };
  return loaded;
}

const policyOn = (loaded: Loaded) => {
  const device = loaded.gpuDevice;
  return new ModelPolicy(loaded.runtime as never, loaded.model, loaded.tokenizer, { engineOptions: device ? { gpuDevice: () => device } : {} });
};

const chat = (text: string) => `<|im_start|>user\n${text}<|im_end|>\n<|im_start|>assistant\n`;

function datum(policy: ModelPolicy, texts: string[], maxNew: number[]): GenerationDatumSpec {
  const ids = texts.map((t) => policy.tokenizer.encode(t));
  const width = Math.max(...ids.map((i) => i.length));
  return {
    input_ids: ids.map((i) => {
      const row = new Int32Array(width).fill(policy.tokenizer.padTokenId);
      row.set(i);
      return row;
    }),
    input_lengths: ids.map((i) => i.length),
    stop_strings: texts.map(() => null),
    max_new_tokens: maxNew,
    sample_ids: texts.map((_, i) => i),
    turns: texts.map(() => 0),
  };
}

/** Waits until the engine runs nothing: the rows a rejected call left are over. */
async function idle(policy: ModelPolicy): Promise<void> {
  const engine = (policy as unknown as { engine: { running: unknown; pending: unknown[]; batches: unknown[] } }).engine;
  while (engine.running || engine.pending.length > 0 || engine.batches.length > 0) await new Promise((r) => setTimeout(r, 50));
}

/** A token callback that throws at the `at`-th token of row `row`. */
const throwsAt = (row: number, at: number): GenerateOptions["onToken"] => {
  let n = 0;
  return (r) => {
    if (r === row && ++n === at) throw new Error("listener failed");
  };
};

describe.skipIf(!vulkan)("the decode engine on WebGPU frees the caches of requests that did not finish", () => {
  beforeAll(async () => {
    gpu = await loadCounted();
    // The kernels compile on the first pass (half a minute on the software adapter).
    const warm = policyOn(gpu);
    await warm.generate(datum(warm, [chat("warm"), chat("up")], [3, 2]), true);
    await warm.dispose();
    expect(live.size).toBe(0);
  }, 600_000);

  it.each([
    ["at its first token (in the prefill)", [chat("Slide the 5 up.")], throwsAt(0, 1)],
    ["at its third token (a decode step of a one-row batch)", [chat("Slide the 5 up.")], throwsAt(0, 3)],
    ["at its second token, beside a row that goes on", [chat("Slide the 5 up."), chat("Which")], throwsAt(0, 2)],
  ] as const)("a row whose token callback throws %s", async (_when, texts, onToken) => {
    const policy = policyOn(gpu);
    const data = datum(policy, [...texts], texts.map(() => 6));
    await expect(policy.generate(data, true, { onToken })).rejects.toThrow("listener failed");
    await idle(policy);
    await policy.dispose();
    expect({ live: live.size, kept: policy.keptCaches!.kept }).toEqual({ live: 0, kept: 0 });
  }, 600_000);

  it("rows still running when their policy is disposed (their call rejected, or its caller stopped reading) keep nothing", async () => {
    const rejected = policyOn(gpu);
    const call = rejected.generate(datum(rejected, [chat("Slide the 5 up."), chat("Which")], [8, 8]), true, { onToken: throwsAt(1, 2) });
    await expect(call).rejects.toThrow("listener failed");
    await rejected.dispose();
    await idle(rejected);
    expect({ live: live.size, kept: rejected.keptCaches!.kept }).toEqual({ live: 0, kept: 0 });

    const abandoned = policyOn(gpu);
    for await (const _ of abandoned.generateAsync(datum(abandoned, [chat("Hi"), chat("Slide the 5 up.")], [1, 8]), true)) break;
    await abandoned.dispose();
    await idle(abandoned);
    expect({ live: live.size, kept: abandoned.keptCaches!.kept }).toEqual({ live: 0, kept: 0 });
  }, 600_000);
});
