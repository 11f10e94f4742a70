/**
 * The device-loss guard in real rollouts (scripted policies stand in for the WebGPU and WASM sessions): with
 * `stop` the run ends at once, what finished is kept and the samples in flight are cancelled; with `wasm` the
 * interrupted generation runs again on the fallback and the rollout goes on to the same result as an undisturbed
 * run. A session that never answers after the loss does not hold the rollout.
 */

import { describe, expect, it } from "vitest";
import { byteLevelTokenizer, type GenerationDatumSpec, type GenerationInterface } from "../../core/index.js";
import { TextPolicy } from "../text-policy.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import { DeviceLossGuard, DeviceLostError, describeDeviceLoss, type DeviceLossAction, type DeviceLossInfo } from "./device-loss.js";

const board = { size: 2, grid: [[1, 2], [0, 3]], solution: [[1, 2], [3, 0]], empty_pos: [1, 0], commands: {} };

/** Three samples of the puzzle; sample 0 may make no move (it ends after its first turn), the others go on. */
const scenario = (mode: "sync" | "async") =>
  parseScenario({
    mode,
    max_seq_len: 4096,
    max_rollout_turns: 4,
    envs: { t: { env: "sliding_puzzle", config: {} } },
    samples: [0, 30, 30].map((max_moves) => ({
      task_name: "t",
      message_log: [{ role: "user", content: "move" }],
      extra_env_info: { game_state: board, num_moves: 0, max_moves },
    })),
    policy: { kind: "scripted", responses: [[]] },
  });

/** A policy whose answer depends only on the sample and the turn (as a seeded model's does). */
const answer = ({ sampleId, turn }: { sampleId: number; turn: number }) => `sample ${sampleId} turn ${turn} <action>view</action>`;

class FakeDevice {
  private listeners = new Set<(info: DeviceLossInfo) => void>();
  subscribe = (listener: (info: DeviceLossInfo) => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
  lose(info: DeviceLossInfo = { reason: "destroyed", message: "Device was destroyed." }) {
    for (const l of this.listeners) l(info);
  }
}

/**
 * The "WebGPU" policy: it answers until the generation of `lossAtTurn`, where the device is lost during the call;
 * the call then never settles (the worst a lost session can do), or fails with the session's own error.
 */
function gpuPolicy(device: FakeDevice, lossAtTurn: number, after: "hang" | "fail-first") {
  const calls: number[] = [];
  const healthy = new TextPolicy(byteLevelTokenizer, (request) => {
    calls.push(request.turn);
    return answer(request);
  });
  const policy: GenerationInterface = {
    generate(data, greedy, options) {
      if (Math.max(...(data.turns ?? [0])) < lossAtTurn) return healthy.generate(data, greedy, options);
      if (after === "fail-first") {
        // The session fails first (a model session rejects the whole call); the lost event comes a little later.
        setTimeout(() => device.lose(), 20);
        return Promise.reject(new Error("Failed to execute 'mapAsync' on 'GPUBuffer': Device is lost"));
      }
      queueMicrotask(() => device.lose());
      return new Promise(() => {});
    },
  };
  return { policy, calls };
}

async function run(mode: "sync" | "async", action: DeviceLossAction, after: "hang" | "fail-first" = "hang") {
  const device = new FakeDevice();
  const controller = new AbortController();
  const gpu = gpuPolicy(device, 2, after);
  const wasmCalls: number[] = [];
  const lostSeen: DeviceLossInfo[] = [];
  const guard = new DeviceLossGuard(gpu.policy, {
    action,
    subscribe: device.subscribe,
    graceMs: 200,
    onLost: (info) => {
      lostSeen.push(info);
      if (action === "stop") controller.abort();
    },
    fallback: async () =>
      new TextPolicy(byteLevelTokenizer, (request) => {
        wasmCalls.push(request.turn);
        return answer(request);
      }),
  });
  const result = await runScenario(scenario(mode), {
    signal: controller.signal,
    policyOverride: { generation: guard, tokenizer: byteLevelTokenizer },
  });
  return { result, lostSeen, wasmCalls, guard };
}

async function undisturbed(mode: "sync" | "async") {
  return runScenario(scenario(mode), { policyOverride: { generation: new TextPolicy(byteLevelTokenizer, answer), tokenizer: byteLevelTokenizer } });
}

describe("a WebGPU device lost mid-run", () => {
  for (const mode of ["sync", "async"] as const) {
    it(`${mode}, on device loss: stop — the run ends at once, finished samples and turns are kept, the rest are cancelled`, async () => {
      const { result, lostSeen } = await run(mode, "stop");
      expect(lostSeen).toHaveLength(1);
      const [first, ...rest] = result.samples;
      expect(first!.termination).toBe("terminated"); // its one turn finished before the loss
      for (const s of rest) {
        expect(s.termination).toBe("cancelled");
        // The two turns before the loss are kept, with the policy's own text.
        const assistant = s.message_log.filter((m) => m.role === "assistant").map((m) => m.content);
        expect(assistant.slice(0, 2)).toEqual([0, 1].map((turn) => `${answer({ sampleId: s.idx, turn })}`.replace(/(<\/action>).*/, "$1")));
      }
      expect(result.metrics["lab/cancelled_samples"]).toBe(2);
    });

    it(`${mode}, on device loss: fall back to WASM — the interrupted turn runs again on WASM and the run ends as an undisturbed one`, async () => {
      const { result, wasmCalls, guard } = await run(mode, "wasm");
      expect(guard.fellBack).toBe(true);
      expect(wasmCalls.length).toBeGreaterThan(0);
      expect(Math.min(...wasmCalls)).toBe(2); // from the interrupted turn on, nothing before it again
      const expected = await undisturbed(mode);
      expect(result.samples.map((s) => [s.termination, s.message_log])).toEqual(expected.samples.map((s) => [s.termination, s.message_log]));
    });
  }

  it("an error of the lost session that comes before the loss event counts as the loss, not as a failed sample", async () => {
    const { result, guard } = await run("sync", "wasm", "fail-first");
    expect(guard.fellBack).toBe(true);
    expect(result.samples.map((s) => s.termination)).not.toContain("error");
    const stopped = await run("sync", "stop", "fail-first");
    expect(stopped.result.samples.slice(1).map((s) => s.termination)).toEqual(["cancelled", "cancelled"]);
  });

  it("an ordinary generation error is not taken for a loss", async () => {
    const device = new FakeDevice();
    const failing: GenerationInterface = { generate: async () => Promise.reject(new Error("out of memory")) };
    const guard = new DeviceLossGuard(failing, { action: "wasm", subscribe: device.subscribe, graceMs: 10 });
    const data: GenerationDatumSpec = { input_ids: [[1]], input_lengths: [1], stop_strings: [null], max_new_tokens: [1] } as unknown as GenerationDatumSpec;
    await expect(guard.generate(data, true)).rejects.toThrow("out of memory");
    expect(guard.lost).toBeNull();
  });

  it("after the loss, stop refuses every generation with a DeviceLostError that says what happened", async () => {
    const device = new FakeDevice();
    const guard = new DeviceLossGuard(new TextPolicy(byteLevelTokenizer, () => "x"), { action: "stop", subscribe: device.subscribe });
    device.lose({ reason: "unknown", message: "GPU process crashed" });
    const data = { input_ids: [[1]], input_lengths: [1], stop_strings: [null], max_new_tokens: [1] } as unknown as GenerationDatumSpec;
    const error = await guard.generate(data, true).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeviceLostError);
    expect((error as Error).message).toBe("the WebGPU device was lost (unknown: GPU process crashed)");
    expect(describeDeviceLoss({ reason: "unknown", message: "", simulated: true })).toBe("the WebGPU device was lost (unknown) [simulated by the test hook]");
  });

  it("disposing after a loss does not wait for the lost session", async () => {
    const device = new FakeDevice();
    const guard = new DeviceLossGuard(new TextPolicy(byteLevelTokenizer, () => "x"), { action: "stop", subscribe: device.subscribe });
    device.lose();
    let disposedFallback = false;
    await guard.dispose(() => new Promise<void>(() => {}), async () => void (disposedFallback = true));
    expect(disposedFallback).toBe(false); // there was no fallback
  });
});
