/**
 * The page's client of the rollout worker (./client.ts). Its watchdog of a stopped run: a rollout worker stuck inside
 * one long synchronous call never reads Stop; after the grace period the page terminates it, the run ends with a
 * `StopTimeoutError`, and the next run gets a fresh worker. A worker that ends its run in time is left alone (and
 * keeps its model for the next run). Its calls (runs, token texts, the test hook's faults) go through `PendingCalls`
 * (src/core/rpc.ts): answers matched by id, all rejected at once when the worker dies, errors rebuilt by name.
 * The Worker here is a stand-in that records what the page sends and answers only when a test says so.
 */

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { abortError, isAbortError, LabError, RemoteError, toWireError } from "../../core/index.js";
import { SchemaError } from "../../core/protocol/schema.js";
import { DEFAULT_STOP_GRACE_MS, RolloutWorkerClient, RolloutWorkerGoneError, StopTimeoutError } from "./client.js";
import type { PageMessage, WorkerMessage } from "./protocol.js";

class FakeWorker {
  static all: FakeWorker[] = [];
  onmessage: ((e: MessageEvent<WorkerMessage>) => void) | null = null;
  onerror: ((e: ErrorEvent) => void) | null = null;
  onmessageerror: ((e: MessageEvent) => void) | null = null;
  readonly sent: PageMessage[] = [];
  terminated = false;
  constructor() {
    FakeWorker.all.push(this);
  }
  postMessage(message: PageMessage): void {
    this.sent.push(message);
  }
  terminate(): void {
    this.terminated = true;
  }
  /** The worker says something to the page (nothing, once terminated). */
  answer(message: WorkerMessage): void {
    if (!this.terminated) this.onmessage?.({ data: message } as MessageEvent<WorkerMessage>);
  }
  runIds(): number[] {
    return this.sent.filter((m) => m.type === "run").map((m) => m.runId);
  }
  /** The calls of a type the page sent. */
  calls<K extends "describe_tokens" | "debug_fault">(type: K): Extract<PageMessage, { type: K; id: number }>[] {
    return this.sent.filter((m): m is Extract<PageMessage, { type: K; id: number }> => m.type === type && "id" in m);
  }
}

const GRACE = 40;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const emptyResult = (runId: number): WorkerMessage => ({ type: "result", runId, result: { samples: [], metrics: {} } });

let saved: unknown;
beforeEach(() => {
  FakeWorker.all = [];
  saved = (globalThis as { Worker?: unknown }).Worker;
  (globalThis as { Worker?: unknown }).Worker = FakeWorker;
});
afterEach(() => {
  (globalThis as { Worker?: unknown }).Worker = saved;
});

describe("the watchdog of a stopped run", () => {
  it("defaults to 3 s; the grace period is an option", () => {
    expect(DEFAULT_STOP_GRACE_MS).toBe(3000);
    expect(new RolloutWorkerClient().stopGraceMs).toBe(3000);
    expect(new RolloutWorkerClient({ stopGraceMs: GRACE }).stopGraceMs).toBe(GRACE);
  });

  it("a worker that never reads the Stop is terminated after the grace period; the run ends with a clear error; the next run gets a fresh worker", async () => {
    const client = new RolloutWorkerClient({ stopGraceMs: GRACE });
    const events: unknown[] = [];
    const handle = client.run({}, { onEvent: (e) => events.push(e) });
    const first = FakeWorker.all[0]!;
    first.answer({ type: "events", runId: 1, events: [{ type: "rollout_error", t: 0, error: "x" }] });
    expect(events).toHaveLength(1);
    const settled = handle.result.then(
      () => null,
      (e: unknown) => e,
    );
    handle.stop();
    expect(first.sent.at(-1)).toEqual({ type: "stop", runId: 1 });
    await sleep(GRACE / 2);
    expect(first.terminated).toBe(false);
    const error = await settled;
    expect(error).toBeInstanceOf(StopTimeoutError);
    expect((error as Error).message).toBe(
      "the rollout worker did not stop within 0.04 s (busy in one long call); it was terminated — finished samples are kept",
    );
    expect(first.terminated).toBe(true);
    // Late words of the terminated worker change nothing.
    first.answer(emptyResult(1));

    const next = client.run({});
    expect(FakeWorker.all).toHaveLength(2);
    expect(FakeWorker.all[1]!.runIds()).toEqual([2]);
    FakeWorker.all[1]!.answer(emptyResult(2));
    await expect(next.result).resolves.toEqual({ samples: [], metrics: {} });
  });

  it("the default message names 3 s", () => {
    expect(new StopTimeoutError(DEFAULT_STOP_GRACE_MS).message).toBe(
      "the rollout worker did not stop within 3 s (busy in one long call); it was terminated — finished samples are kept",
    );
  });

  it("a worker that read the Stop but did not end the run in time (a model load) is terminated too, and the message says so", async () => {
    const client = new RolloutWorkerClient({ stopGraceMs: GRACE });
    const handle = client.run({});
    handle.stop();
    FakeWorker.all[0]!.answer({ type: "stop_received", runId: 1 });
    const error = await handle.result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StopTimeoutError);
    expect((error as StopTimeoutError).responsive).toBe(true);
    expect((error as Error).message).toMatch(/^the run did not end within 0\.04 s of Stop \(the rollout worker was waiting on work Stop cannot interrupt/);
    expect(FakeWorker.all[0]!.terminated).toBe(true);
  });

  it("a run that ends in time after Stop keeps its worker (and its model) for the next run", async () => {
    const client = new RolloutWorkerClient({ stopGraceMs: GRACE });
    const handle = client.run({});
    handle.stop();
    FakeWorker.all[0]!.answer(emptyResult(1));
    await expect(handle.result).resolves.toEqual({ samples: [], metrics: {} });
    await sleep(GRACE * 2);
    expect(FakeWorker.all[0]!.terminated).toBe(false);
    client.run({});
    expect(FakeWorker.all).toHaveLength(1);
    expect(FakeWorker.all[0]!.runIds()).toEqual([1, 2]);
  });

  it("a run started while a stopped one has not ended waits: on the same worker when that run ends in time", async () => {
    const client = new RolloutWorkerClient({ stopGraceMs: GRACE });
    const old = client.run({});
    old.stop();
    const next = client.run({});
    next.pause();
    const worker = FakeWorker.all[0]!;
    expect(worker.runIds()).toEqual([1]);
    worker.answer(emptyResult(1));
    await old.result;
    // Posted with the controls given meanwhile, in order.
    expect(worker.sent.filter((m) => "runId" in m && m.runId === 2).map((m) => m.type)).toEqual(["run", "pause"]);
    expect(FakeWorker.all).toHaveLength(1);
  });

  it("a run waiting to start hears that an environment's host was restarted: the new port goes right after the run", async () => {
    const client = new RolloutWorkerClient({ stopGraceMs: GRACE });
    const old = client.run({});
    old.stop();
    const next = client.run({});
    const first = new MessageChannel();
    const second = new MessageChannel();
    // Two restarts while it waits: the last port goes, the one it replaces is closed.
    next.environmentHost("echo_env", { outcome: "replaced", port: first.port2, why: "restarted" });
    next.environmentHost("echo_env", { outcome: "replaced", port: second.port2, why: "restarted again" });
    // The restarted host answering a later check changes nothing: the run still needs its port to it.
    next.environmentHost("echo_env", { outcome: "answering" });
    const worker = FakeWorker.all[0]!;
    worker.answer(emptyResult(1));
    await old.result;
    const sent = worker.sent.filter((m) => "runId" in m && m.runId === 2);
    expect(sent.map((m) => m.type)).toEqual(["run", "environment_host"]);
    expect(sent[1]).toMatchObject({ name: "echo_env", news: { outcome: "replaced", port: second.port2, why: "restarted again" } });
    for (const c of [first, second]) {
      c.port1.close();
      c.port2.close();
    }
  });

  it("... and on a fresh worker when the stuck one was terminated; other runs of the stuck worker fail with why", async () => {
    const client = new RolloutWorkerClient({ stopGraceMs: GRACE });
    const stuck = client.run({});
    const beside = client.run({}); // a fork running in the same worker, not stopped
    stuck.stop();
    const next = client.run({});
    const besideError = beside.result.catch((e: Error) => e.message);
    await expect(stuck.result).rejects.toBeInstanceOf(StopTimeoutError);
    expect(await besideError).toBe("the rollout worker was terminated: a stopped run did not end within 0.04 s");
    expect(FakeWorker.all).toHaveLength(2);
    expect(FakeWorker.all[0]!.runIds()).toEqual([1, 2]);
    expect(FakeWorker.all[1]!.runIds()).toEqual([3]);
    FakeWorker.all[1]!.answer(emptyResult(3));
    await expect(next.result).resolves.toEqual({ samples: [], metrics: {} });
  });

  it("a crash during the grace period fails the run as a crash (no second ending)", async () => {
    const client = new RolloutWorkerClient({ stopGraceMs: GRACE });
    const handle = client.run({});
    handle.stop();
    FakeWorker.all[0]!.onerror?.({ message: "boom", preventDefault() {} } as ErrorEvent);
    await expect(handle.result).rejects.toThrow("the rollout worker crashed: boom");
    await sleep(GRACE * 2);
    expect(FakeWorker.all).toHaveLength(1);
  });
});

describe("requests and answers (PendingCalls)", () => {
  const settled = <T>(promise: Promise<T>) =>
    promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );

  it("an answer is matched to its call by id, in whatever order the answers come; an unknown or repeated id changes nothing", async () => {
    const client = new RolloutWorkerClient();
    const seen: [number[], string[], boolean[]][] = [];
    client.onTokens((_model, ids, texts, special) => seen.push([ids, texts, special]));
    client.run({});
    const worker = FakeWorker.all[0]!;
    client.describeTokens([1, 2], "builtin:tiny-qwen3");
    client.describeTokens([3], "builtin:tiny-qwen3");
    const [a, b] = worker.calls("describe_tokens");
    expect(a!.ids).toEqual([1, 2]);
    expect(a!.model).toBe("builtin:tiny-qwen3");
    expect(b!.ids).toEqual([3]);
    expect(a!.id).not.toBe(b!.id);
    worker.answer({ type: "tokens_described", id: b!.id, texts: ["c"], special: [true] });
    worker.answer({ type: "tokens_described", id: 999, texts: ["?"], special: [false] });
    worker.answer({ type: "tokens_described", id: a!.id, texts: ["a", "b"], special: [false, false] });
    worker.answer({ type: "tokens_described", id: a!.id, texts: ["again", "again"], special: [false, false] });
    await sleep(0);
    expect(seen).toEqual([
      [[3], ["c"], [true]],
      [
        [1, 2],
        ["a", "b"],
        [false, false],
      ],
    ]);

    // The test hook's faults too: each resolves with its own answer.
    const armed = client.injectFault("hold_generation");
    const held = client.injectFault("generation_held");
    const [arm, hold] = worker.calls("debug_fault");
    expect([arm!.fault, hold!.fault]).toEqual(["hold_generation", "generation_held"]);
    worker.answer({ type: "fault_injected", id: hold!.id, detail: "held" });
    worker.answer({ type: "fault_injected", id: arm!.id, detail: "armed" });
    expect([await armed, await held]).toEqual(["armed", "held"]);
    // A fault the worker does not answer is sent without an id, and resolves with null at once.
    await expect(client.injectFault("hang", 5)).resolves.toBeNull();
    expect(worker.sent.at(-1)).toEqual({ type: "debug_fault", fault: "hang", ms: 5 });
  });

  it("run ids stay unique across the workers the client starts", () => {
    const client = new RolloutWorkerClient();
    client.run({}).result.catch(() => {});
    FakeWorker.all[0]!.onerror?.({ message: "boom", preventDefault() {} } as ErrorEvent);
    client.run({}).result.catch(() => {});
    expect(FakeWorker.all[1]!.runIds()).toEqual([2]);
  });

  for (const [how, kill, message] of [
    ["crashes (an error event)", (w: FakeWorker) => w.onerror?.({ message: "boom", preventDefault() {} } as ErrorEvent), "the rollout worker crashed: boom"],
    [
      "sends what cannot be read (messageerror)",
      (w: FakeWorker) => w.onmessageerror?.({} as MessageEvent),
      "the rollout worker sent a message the page could not read; it was terminated",
    ],
  ] as const) {
    it(`a worker that ${how} rejects every run and call waiting on it with one clear error; later ones go to a fresh worker`, async () => {
      const client = new RolloutWorkerClient();
      const runs = [client.run({}), client.run({})].map((h) => settled(h.result));
      const fault = client.injectFault("generation_held");
      const tokens: number[][] = [];
      client.onTokens((_model, ids) => tokens.push(ids));
      client.describeTokens([7], "builtin:tiny");
      const worker = FakeWorker.all[0]!;
      kill(worker);
      expect(worker.terminated).toBe(true);
      const [first, second] = (await Promise.all(runs)) as { error: Error }[];
      expect(first!.error).toBeInstanceOf(RolloutWorkerGoneError);
      expect(first!.error).toBe(second!.error);
      expect([first!.error.name, first!.error.message, (first!.error as LabError).code]).toEqual(["RolloutWorkerGoneError", message, "worker_gone"]);
      // The test hook's calls resolve with null when the worker ends first; token texts simply never come.
      await expect(fault).resolves.toBeNull();
      await sleep(0);
      expect(tokens).toEqual([]);
      // A late answer of the dead worker changes nothing.
      worker.terminated = false;
      worker.answer(emptyResult(1));

      const next = client.run({});
      expect(FakeWorker.all).toHaveLength(2);
      FakeWorker.all[1]!.answer(emptyResult(3));
      await expect(next.result).resolves.toEqual({ samples: [], metrics: {} });
    });
  }

  it("the watchdog's termination rejects the calls waiting on the worker too", async () => {
    const client = new RolloutWorkerClient({ stopGraceMs: GRACE });
    const handle = client.run({});
    const fault = client.injectFault("release_generation");
    handle.stop();
    await expect(handle.result).rejects.toBeInstanceOf(StopTimeoutError);
    await expect(fault).resolves.toBeNull();
  });

  it("a run's failure crosses the wire as a WireError and is rebuilt by its name and code", async () => {
    const client = new RolloutWorkerClient();
    const schema = client.run({});
    const cancelled = client.run({});
    const worker = FakeWorker.all[0]!;
    const wire = structuredClone(toWireError(new SchemaError("the tool schema is bad")));
    worker.answer({ type: "failed", runId: 1, error: wire });
    worker.answer({ type: "failed", runId: 2, error: structuredClone(toWireError(abortError("stopped"))) });
    const error = (await schema.result.catch((e: unknown) => e)) as RemoteError;
    expect(error).toBeInstanceOf(RemoteError);
    expect(error).toBeInstanceOf(LabError);
    expect([error.name, error.message, error.code, error.stack]).toEqual(["SchemaError", "the tool schema is bad", "invalid_tool_schema", wire.stack]);
    const abort = await cancelled.result.catch((e: unknown) => e);
    expect(isAbortError(abort)).toBe(true);
    // The worker lives on: a failed run is not a dead worker.
    expect(worker.terminated).toBe(false);
  });

  it("a call's failure is rebuilt by name too (a fault the worker could not inject rejects with its error)", async () => {
    const client = new RolloutWorkerClient();
    client.run({});
    const worker = FakeWorker.all[0]!;
    const fault = client.injectFault("device_lost");
    const [call] = worker.calls("debug_fault");
    const wrong = new TypeError("no WebGPU device to lose");
    worker.answer({ type: "call_failed", id: call!.id, error: structuredClone(toWireError(wrong)) });
    const error = (await fault.catch((e: unknown) => e)) as RemoteError;
    expect(error).toBeInstanceOf(RemoteError);
    expect([error.name, error.message, error.code]).toEqual(["TypeError", "no WebGPU device to lose", "remote_error"]);
  });

  it("a run that cannot be handed to the worker throws from run and leaves nothing waiting", async () => {
    const client = new RolloutWorkerClient();
    client.run({});
    const worker = FakeWorker.all[0]!;
    const post = worker.postMessage.bind(worker);
    worker.postMessage = () => {
      throw new DOMException("could not be cloned", "DataCloneError");
    };
    expect(() => client.run({ f: () => 1 })).toThrow("could not be cloned");
    worker.postMessage = post;
    worker.answer(emptyResult(1));
    // The run that failed to start does not hold the worker: a stop of the next one is watched as usual.
    const next = client.run({});
    expect(worker.runIds()).toEqual([1, 3]);
    worker.answer(emptyResult(3));
    await expect(next.result).resolves.toEqual({ samples: [], metrics: {} });
  });
});
