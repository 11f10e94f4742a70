/**
 * The test hook's hold on a generation (./generation-hold.ts), in real rollouts under the device-loss guard as the
 * rollout worker wires it: unarmed it changes nothing; armed, the call that finishes next does not return until
 * released (then the run ends as an undisturbed one), or until its run is cancelled; a device loss while a call is
 * held lands during that generation (stop: the run ends, what finished is kept; wasm: the held turn runs again on
 * the fallback and the run ends as an undisturbed one).
 */

import { describe, expect, it } from "vitest";
import { byteLevelTokenizer } from "../../core/index.js";
import { DeviceLossGuard, type DeviceLossAction, type DeviceLossInfo } from "../../policy/llm/device-loss.js";
import { TextPolicy } from "../../policy/text-policy.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import { GenerationHold } from "./generation-hold.js";

const board = { size: 2, grid: [[1, 2], [0, 3]], solution: [[1, 2], [3, 0]], empty_pos: [1, 0], commands: {} };

/** Two puzzle samples: sample 0 makes no move (it ends after its first turn), sample 1 goes on for 3 turns. */
const scenario = (mode: "sync" | "async") =>
  parseScenario({
    mode,
    max_seq_len: 4096,
    max_rollout_turns: 3,
    envs: { t: { env: "sliding_puzzle", config: {} } },
    samples: [0, 30].map((max_moves) => ({
      task_name: "t",
      message_log: [{ role: "user", content: "move" }],
      extra_env_info: { game_state: board, num_moves: 0, max_moves },
    })),
    policy: { kind: "scripted", responses: [[]] },
  });

/** A seeded model's answer: it depends only on the sample and the turn. */
const answer = ({ sampleId, turn }: { sampleId: number; turn: number }) => `sample ${sampleId} turn ${turn} <action>view</action>`;

class FakeDevice {
  private listeners = new Set<(info: DeviceLossInfo) => void>();
  subscribe = (listener: (info: DeviceLossInfo) => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
  lose() {
    for (const l of this.listeners) l({ reason: "destroyed", message: "Device was destroyed." });
  }
}

/**
 * A run whose "WebGPU" policy is wrapped in `hold`, under the guard; the hold is armed while sample 1's turn
 * `armAt` generates (so that call is the one held). `whileHeld` runs once it is held.
 */
async function run(mode: "sync" | "async", options: { action?: DeviceLossAction; armAt?: number; whileHeld?: (ctx: { hold: GenerationHold; device: FakeDevice; controller: AbortController }) => void }) {
  const { action = "stop", armAt = null, whileHeld } = options;
  const hold = new GenerationHold();
  const device = new FakeDevice();
  const controller = new AbortController();
  const wasmTurns: number[] = [];
  let armed = false;
  const gpu = new TextPolicy(byteLevelTokenizer, (request) => {
    if (request.sampleId === 1 && request.turn === armAt && !armed) {
      armed = true;
      hold.arm();
    }
    return answer(request);
  });
  const guard = new DeviceLossGuard(hold.wrap(gpu), {
    action,
    subscribe: device.subscribe,
    onLost: () => {
      if (action === "stop") controller.abort();
    },
    fallback: async () =>
      new TextPolicy(byteLevelTokenizer, (request) => {
        wasmTurns.push(request.turn);
        return answer(request);
      }),
  });
  if (whileHeld) void hold.whenHeld().then(() => whileHeld({ hold, device, controller }));
  const result = await runScenario(scenario(mode), { signal: controller.signal, policyOverride: { generation: guard, tokenizer: byteLevelTokenizer } });
  return { result, wasmTurns, guard, hold };
}

const undisturbed = (mode: "sync" | "async") =>
  runScenario(scenario(mode), { policyOverride: { generation: new TextPolicy(byteLevelTokenizer, answer), tokenizer: byteLevelTokenizer } });
const logs = (result: Awaited<ReturnType<typeof undisturbed>>) => result.samples.map((s) => [s.termination, s.message_log]);
const assistantTurns = (s: { message_log: { role: string }[] }) => s.message_log.filter((m) => m.role === "assistant").length;

describe("the test hook's hold on a generation", () => {
  for (const mode of ["sync", "async"] as const) {
    it(`${mode}: unarmed, nothing is held and the run is an undisturbed one`, async () => {
      const { result, hold } = await run(mode, {});
      expect(logs(result)).toEqual(logs(await undisturbed(mode)));
      expect(hold.holding).toBe(false);
      expect(hold.release()).toBe(false);
    });

    it(`${mode}: armed, the call that finishes next is held until released; then the run ends as an undisturbed one`, async () => {
      let sawHeld = false;
      const { result } = await run(mode, {
        armAt: 1,
        whileHeld: ({ hold }) => {
          sawHeld = hold.holding;
          // Held once only: released, the later calls return at once.
          expect(hold.release()).toBe(true);
          expect(hold.holding).toBe(false);
        },
      });
      expect(sawHeld).toBe(true);
      expect(logs(result)).toEqual(logs(await undisturbed(mode)));
    });

    it(`${mode}: a device loss while a call is held, on device loss: stop — the run ends, what finished is kept`, async () => {
      const { result, guard } = await run(mode, { armAt: 1, whileHeld: ({ device }) => device.lose() });
      expect(guard.lost?.reason).toBe("destroyed");
      expect(result.samples.map((s) => s.termination)).toEqual(["terminated", "cancelled"]);
      // Sample 1's first turn finished before the loss; the held one (its second) is not kept.
      expect(assistantTurns(result.samples[1]!)).toBe(1);
    });

    it(`${mode}: a device loss while a call is held, fall back to WASM — the held turn runs again there, the run is an undisturbed one`, async () => {
      const { result, wasmTurns, guard } = await run(mode, { action: "wasm", armAt: 1, whileHeld: ({ device }) => device.lose() });
      expect(guard.fellBack).toBe(true);
      expect(wasmTurns).toEqual([1, 2]);
      expect(logs(result)).toEqual(logs(await undisturbed(mode)));
    });

    it(`${mode}: stopped while a call is held, the call is cancelled with its run`, async () => {
      const { result, hold } = await run(mode, { armAt: 1, whileHeld: ({ controller }) => controller.abort() });
      expect(result.samples.map((s) => s.termination)).toEqual(["terminated", "cancelled"]);
      expect(hold.holding).toBe(false);
    });
  }
});
