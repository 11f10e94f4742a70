/**
 * The run session without React: runs started, controlled and ended, what is shown and set aside, the newest
 * claim winning, forks as runs with a fork plan, and the lifecycle events saving and the forks list follow.
 */

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseScenario, type Scenario } from "../../scenario/schema.js";
import { RunModel } from "../run/run-model.js";
import { setKeptAs } from "../run/kept-as.js";
import { FakeRunClient, nextTurn, plainSelection, rolloutStart, sampleEnd } from "./fake-client.fixture.js";
import { RunSession, type SessionEvent } from "./run-session.js";

const scenario: Scenario = parseScenario(JSON.parse(await readFile(join(import.meta.dirname, "..", "..", "scenario", "examples", "sliding-puzzle-oracle-sync.json"), "utf8")));

function setUp() {
  const client = new FakeRunClient();
  const selection = plainSelection();
  const notices: string[] = [];
  const ports: string[][] = [];
  const session = new RunSession(client, {
    selection,
    environments: { settled: async () => undefined, connect: (names) => (ports.push(names), { ports: [], overdue: () => {}, release: () => {} }) },
    notifyReplaced: (text) => notices.push(text),
    // Drawn at once in the tests (the page draws at most once per frame).
    budget: { frame: (f) => f(), later: (f) => f(), microtask: (f) => f() },
  });
  const events: SessionEvent[] = [];
  session.on((e) => events.push(e));
  const types = () => events.map((e) => (e.type === "shown" ? `shown ${e.shown.kind}` : e.type === "status" ? `status ${e.status}` : e.type));
  return { client, selection, session, notices, events, types, ports };
}

const finishedModel = (samples = 1) => {
  const model = new RunModel();
  model.apply(rolloutStart(samples));
  for (let i = 0; i < samples; i++) model.apply(sampleEnd(i));
  return model;
};

describe("a run of the session", () => {
  it("starts once the user environments settled, is shown live, publishes its events, and ends finished", async () => {
    const { client, session, types, ports, selection } = setUp();
    selection.current = { selected: 3, selectedTurn: 1 };
    const model = session.start(scenario);
    expect(session.state).toMatchObject({ kind: "run", model, scenario, status: "running", error: null });
    expect(selection.current).toEqual({ selected: 0, selectedTurn: null });
    expect(client.runs).toHaveLength(0); // waits for the environments
    await nextTurn();
    expect(ports).toEqual([["sliding_puzzle"]]);
    let published = 0;
    model.subscribe(() => published++);
    client.last.emit(rolloutStart(2), sampleEnd(0));
    expect(model.samples).toHaveLength(2);
    expect(published).toBeGreaterThan(0);
    expect(model.snapshot).toEqual({ model, version: model.version });
    client.last.finish();
    await nextTurn();
    expect(session.state.status).toBe("finished");
    expect(types()).toEqual(["shown run", "started", "status finished", "ended"]);
  });

  it("pause, step, resume and stop act on the run shown; a stopped paused run is resumed so it can end", async () => {
    const { client, session, types } = setUp();
    session.start(scenario);
    await nextTurn();
    session.step(); // not paused: nothing
    session.pause();
    expect(session.state.status).toBe("paused");
    session.step();
    session.resume();
    session.pause();
    session.stop();
    expect(client.last.asked).toEqual(["pause", "step", "resume", "pause", "stop", "resume"]);
    expect(types()).toEqual(["shown run", "started", "status paused", "status running", "status paused"]);
  });

  it("a failed run keeps what finished: the samples under way end with the reason, and it fails with it", async () => {
    const { client, session, events } = setUp();
    const model = session.start(scenario);
    await nextTurn();
    client.last.emit(rolloutStart(2), sampleEnd(0));
    client.last.fail(new Error("the rollout worker crashed"));
    await nextTurn();
    expect(session.state).toMatchObject({ status: "failed", error: "the rollout worker crashed" });
    expect(model.samples.map((s) => [s.termination, s.error])).toEqual([
      ["terminated", null],
      ["error", expect.stringContaining("the rollout worker crashed")],
    ]);
    expect(events.at(-1)).toMatchObject({ type: "failed", model, error: "the rollout worker crashed" });
  });

  it("a new run stops the one under way and says so; that one still ends (and is kept) on its own", async () => {
    const { client, session, notices, events } = setUp();
    const first = session.start(scenario);
    await nextTurn();
    const firstRun = client.last;
    const second = session.start(scenario);
    expect(firstRun.asked).toEqual(["stop"]);
    expect(notices).toEqual(["The run under way was stopped (as Stop stops it) and is kept among the saved runs: a new run started."]);
    expect(session.state.model).toBe(second);
    firstRun.emit(rolloutStart(1));
    firstRun.finish();
    await nextTurn();
    expect(events.filter((e) => e.type === "ended").map((e) => (e as { model: RunModel }).model)).toEqual([first]);
    expect(session.state).toMatchObject({ model: second, status: "running" });
  });

  it("a run replaced before its worker started runs nothing, and nobody is told it was kept", async () => {
    const { client, session, notices, events } = setUp();
    const first = session.start(scenario);
    session.start(scenario);
    await nextTurn();
    expect(client.runs).toHaveLength(1);
    expect(notices).toEqual([]);
    expect(events.find((e) => e.type === "failed")).toMatchObject({ model: first });
  });

  it("a human run ends as a scripted scenario of what was typed (its export and links replay it)", async () => {
    const { client, session, events } = setUp();
    session.start(scenario, { settings: { human: true } });
    await nextTurn();
    client.last.emit(rolloutStart(1));
    client.last.handlers.onHumanRequest?.({ requestId: 7, sample: 0, turn: 0, contextTail: "…", stopStrings: null });
    expect(session.state.humanRequests).toHaveLength(1);
    session.answerHuman(7, "up");
    expect(client.last.asked).toEqual(["answer 7: up"]);
    expect(session.state.humanRequests).toEqual([]);
    client.last.finish();
    await nextTurn();
    const ended = events.find((e) => e.type === "ended") as Extract<SessionEvent, { type: "ended" }>;
    expect(ended.scenario.policy).toEqual({ kind: "scripted", responses: [["up"]] });
    expect(session.state.scenario).toEqual(ended.scenario);
  });
});

describe("what the session shows", () => {
  it("the newest claim wins: an older import's run is not shown after a newer one", () => {
    const { session } = setUp();
    const older = session.claim();
    const newer = session.claim();
    expect(older.aborted).toBe(true);
    const b = finishedModel();
    expect(session.show({ model: b, scenario: null, kind: "imported" }, { claim: newer })).toBe(true);
    expect(session.show({ model: finishedModel(), scenario: null, kind: "imported" }, { claim: older })).toBe(false);
    expect(session.state.model).toBe(b);
  });

  it("a run started supersedes a claim; the claim's show then shows nothing and stops nothing", async () => {
    const { client, session } = setUp();
    const claim = session.claim();
    const live = session.start(scenario);
    expect(claim.aborted).toBe(true);
    await nextTurn();
    expect(session.show({ model: finishedModel(), scenario: null, kind: "imported" }, { claim })).toBe(false);
    expect(session.state).toMatchObject({ model: live, status: "running" });
    expect(client.last.asked).toEqual([]);
  });

  it("showing a saved run stops the live one (as Stop does) and shows the saved one finished, selection at its start", async () => {
    const { client, session, notices, selection } = setUp();
    session.start(scenario);
    await nextTurn();
    selection.current = { selected: 2, selectedTurn: 2 };
    const saved = finishedModel(3);
    setKeptAs(saved, { state: "saved", id: "r1" });
    session.show({ model: saved, scenario: null, kind: "saved" });
    expect(client.last.asked).toEqual(["stop"]);
    expect(notices[0]).toMatch(/is kept among the saved runs: the page shows the run opened instead\.$/);
    expect(session.state).toMatchObject({ kind: "saved", model: saved, status: "finished" });
    expect(selection.current).toEqual({ selected: 0, selectedTurn: null });
  });

  it("refuses a scenario that cannot start with its error, and closes what is shown unless it is live", async () => {
    const { session } = setUp();
    session.show({ model: finishedModel(), scenario: null, kind: "imported" });
    session.refuse("scenario: mode: expected sync or async");
    expect(session.state).toMatchObject({ status: "failed", error: "scenario: mode: expected sync or async" });
    session.close();
    expect(session.state).toMatchObject({ kind: "none", model: null, status: "idle" });
    session.start(scenario);
    session.close();
    expect(session.state.kind).toBe("run");
  });
});

describe("a fork is a run started with a fork plan", () => {
  it("its model and first selection are the fork's; its own events go through the fork's apply", async () => {
    const { client, session, selection, types } = setUp();
    const original = finishedModel(2);
    session.show({ model: original, scenario, kind: "run" });
    const forked = new RunModel();
    setKeptAs(forked, { state: "fork" });
    const applied: string[] = [];
    session.start(scenario, { fork: { model: forked, apply: (e) => (applied.push(e.type), forked.apply(e)), select: { selected: 0, selectedTurn: 2 } } });
    expect(session.state).toMatchObject({ kind: "fork", model: forked, status: "running" });
    expect(selection.current).toEqual({ selected: 0, selectedTurn: 2 });
    await nextTurn();
    client.last.emit(rolloutStart(1));
    expect(applied).toEqual(["rollout_start"]);
    // The original shown again while the fork goes on (the same tree): nothing is stopped.
    session.show({ model: original, scenario, kind: "run" }, { keepLive: true });
    expect(client.last.asked).toEqual([]);
    session.show({ model: forked, scenario, kind: "fork", status: "finished" }, { keepLive: true });
    expect(session.state.status).toBe("running"); // a live run is shown as it is
    client.last.finish();
    await nextTurn();
    expect(types().slice(-2)).toEqual(["status finished", "ended"]);
  });

  it("a fork replaced by another run is said to stay with its run's forks", async () => {
    const { session, notices } = setUp();
    const forked = new RunModel();
    setKeptAs(forked, { state: "fork" });
    session.start(scenario, { fork: { model: forked, apply: (e) => forked.apply(e), select: { selected: 0, selectedTurn: 0 } } });
    await nextTurn();
    session.start(scenario);
    expect(notices).toEqual(["The fork under way was stopped (as Stop stops it) and stays with its run's forks: a new run started."]);
  });
});
