/**
 * The page's watchdog of a stopped run (./client.ts): a rollout worker stuck inside one long synchronous call never
 * reads Stop; after the grace period the page terminates it, the run ends with a `StopTimeoutError`, and the next
 * run gets a fresh worker. A worker that ends its run in time is left alone (and keeps its model for the next run).
 * The Worker here is a stand-in that records what the page sends and answers only when a test says so.
 */

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_STOP_GRACE_MS, RolloutWorkerClient, StopTimeoutError } from "./client.js";
import type { PageMessage, WorkerMessage } from "./protocol.js";

class FakeWorker {
  static all: FakeWorker[] = [];
  onmessage: ((e: MessageEvent<WorkerMessage>) => void) | null = null;
  onerror: ((e: ErrorEvent) => void) | null = null;
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
    expect(worker.sent.filter((m) => m.runId === 2).map((m) => m.type)).toEqual(["run", "pause"]);
    expect(FakeWorker.all).toHaveLength(1);
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
