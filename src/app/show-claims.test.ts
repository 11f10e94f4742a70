/**
 * What the page shows next is the newest thing the user did (./session/run-session.ts `claim`): an older import or
 * open whose run model is still being built shows nothing once a newer import, open or run superseded it, and does not
 * stop a run started meanwhile; the building itself stops (./run/build-slices.ts). Here with the page's real worker
 * client, its Worker stood in for.
 */

import { afterEach, describe, expect, it, vi } from "vitest";
import type { Scenario } from "../scenario/schema.js";
import { buildRunInSlices } from "./run/build-slices.js";
import { RunModel } from "./run/run-model.js";
import { plainSelection } from "./session/fake-client.fixture.js";
import { RunSession } from "./session/run-session.js";
import { RolloutWorkerClient } from "./worker/client.js";

/** The rollout worker stood in for: it records what it is sent, and ends a stopped run at once. */
class FakeWorker {
  static sent: { type: string; runId?: number }[] = [];
  onmessage: ((e: MessageEvent) => void) | null = null;
  onerror: ((e: ErrorEvent) => void) | null = null;
  postMessage(message: { type: string; runId: number }) {
    FakeWorker.sent.push(message);
    if (message.type === "stop") setTimeout(() => this.onmessage?.({ data: { type: "failed", runId: message.runId, error: { name: "Error", message: "stopped", stack: "", code: null } } } as MessageEvent));
  }
  terminate() {}
}

const finished = (samples = 1) => {
  const model = new RunModel();
  model.apply({ type: "rollout_start", t: 0, mode: "sync", maxRolloutTurns: 1, maxSeqLen: 10, samples: [] });
  model.appendSamples(Array.from({ length: samples }, (_, i) => ({ sample: i, idx: i, task_name: "t", message_log: [], extra_env_info: null })));
  return model;
};
const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

const session = new RunSession(new RolloutWorkerClient(), { selection: plainSelection() });
const scenario = { mode: "sync", envs: { game: { env: "sliding_puzzle", config: {} } }, policy: { kind: "oracle", seed: 0 } } as unknown as Scenario;
const show = (model: RunModel, claim?: AbortSignal) => session.show({ model, scenario: null, kind: "imported" }, claim ? { claim } : {});

afterEach(async () => {
  // Back to a page that shows a finished run (whatever the test started is stopped).
  show(finished());
  await nextTurn();
  vi.unstubAllGlobals();
});

describe("the newest import, open or run is what the page shows", () => {
  it("a newer claim supersedes an older one: the older import's run is not shown after the newer one", () => {
    const older = session.claim();
    const newer = session.claim();
    expect(older.aborted).toBe(true);
    expect(newer.aborted).toBe(false);
    const b = finished();
    expect(show(b, newer)).toBe(true);
    expect(show(finished(), older)).toBe(false);
    expect(session.state.model).toBe(b);
  });

  it("a run started meanwhile supersedes it: the older import shows nothing and does not stop the run", async () => {
    vi.stubGlobal("Worker", FakeWorker);
    FakeWorker.sent = [];
    const claim = session.claim();
    session.start(scenario);
    expect(claim.aborted).toBe(true);
    await nextTurn();
    expect(FakeWorker.sent.map((m) => m.type)).toContain("run");
    const live = session.state.model;
    expect(show(finished(), claim)).toBe(false);
    expect(session.state.status).toBe("running");
    expect(session.state.model).toBe(live);
    expect(FakeWorker.sent.map((m) => m.type)).not.toContain("stop");
  });

  it("a fork's run started supersedes it too; another run shown without a claim as well", async () => {
    vi.stubGlobal("Worker", FakeWorker);
    const claim = session.claim();
    const forked = new RunModel();
    session.start(scenario, { fork: { model: forked, apply: (e) => forked.apply(e), select: { selected: 0, selectedTurn: 0 } } });
    expect(claim.aborted).toBe(true);
    await nextTurn();
    const again = session.claim();
    show(finished());
    expect(again.aborted).toBe(true);
  });

  it("a superseded import stops building its run model between slices", async () => {
    const claim = new AbortController();
    const samples = Array.from({ length: 20 }, (_, idx) => ({ idx, task_name: "t", message_log: [{ role: "user", content: "q", token_ids: [1] }] }));
    let pauses = 0;
    const built = buildRunInSlices(
      { samples, footer: null },
      {
        sliceMs: 0,
        signal: claim.signal,
        yieldToPage: async () => {
          if (++pauses === 3) claim.abort(new DOMException("superseded", "AbortError"));
        },
      },
    );
    await expect(built).rejects.toThrow("superseded");
    expect(pauses).toBe(3);
    // Already superseded: nothing is built at all.
    await expect(buildRunInSlices({ samples, footer: null }, { signal: claim.signal })).rejects.toThrow("superseded");
  });
});
