/**
 * The user environments' store (./user-environments.ts) with its host Worker stood in for and a fake IndexedDB:
 * each load is the origin's next version, says whether its text changed, and a module from a file or a URL is kept
 * in this browser with how its load went; after a reload of the page it is offered, not loaded, and loading its
 * kept copy fetches nothing. A storage that refuses says so, and the module still works in the page.
 */

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeIndexedDB } from "../run/fake-idb.fixture.js";
import { HOST_ANSWER_GRACE_MS } from "../../envs/user/host-ping.js";
import type { HostReply, HostRequest } from "./host-protocol.js";

/** The host Worker: a text with `SYNTAX` fails as a syntax error would; any other loads as `name_env` (from `// name: x`). */
class FakeHostWorker {
  static loads: string[] = [];
  static started: FakeHostWorker[] = [];
  /** Whether the next worker started is stuck (answers no ping, as one busy in a synchronous loop). */
  static nextStuck = false;
  stuck = FakeHostWorker.nextStuck;
  terminated = false;
  onmessage: ((e: { data: HostReply }) => void) | null = null;
  onerror: unknown = null;
  constructor() {
    FakeHostWorker.nextStuck = false;
    FakeHostWorker.started.push(this);
  }
  postMessage(request: HostRequest) {
    if (request.type === "ping" && !this.stuck) setTimeout(() => this.onmessage?.({ data: { type: "pong", id: request.id } }));
    if (request.type !== "load") return;
    FakeHostWorker.loads.push(request.source);
    const name = /\/\/ name: (\w+)/.exec(request.source)?.[1] ?? "echo_env";
    const reply: HostReply = request.source.includes("SYNTAX")
      ? { type: "failed", message: `Unexpected token '}' at ${request.origin}:3:29`, stack: `${request.origin}:3:29: Unexpected token\n  step( }\n        ^` }
      : { type: "loaded", description: { name, title: `Title of ${name}`, description: "", defaultTaskName: name, hasView: false } };
    setTimeout(() => this.onmessage?.({ data: reply }));
  }
  terminate() {
    this.terminated = true;
  }
}

class FakeChannel {
  port1 = { postMessage() {}, onmessage: null };
  port2 = { postMessage() {}, onmessage: null };
}

let fake: FakeIndexedDB;
const fetches: string[] = [];
beforeEach(() => {
  vi.resetModules();
  fake = new FakeIndexedDB();
  fetches.length = 0;
  FakeHostWorker.loads = [];
  FakeHostWorker.started = [];
  FakeHostWorker.nextStuck = false;
  vi.stubGlobal("indexedDB", fake);
  vi.stubGlobal("Worker", FakeHostWorker);
  vi.stubGlobal("MessageChannel", FakeChannel);
  vi.stubGlobal("fetch", async (url: string) => {
    fetches.push(url);
    return new Response("// name: far_env\nexport default {};\n");
  });
});
afterEach(() => vi.unstubAllGlobals());

/** The page's store, as a fresh page gets it: `vi.resetModules()` first for a reload. */
async function page() {
  const { useUserEnvironments } = await import("./user-environments.js");
  await useUserEnvironments.getState().listKept();
  return useUserEnvironments;
}

const A = "// name: echo_env\nexport default { a: 1 };\n";
const B = "// name: echo_env\nexport default { a: 2 };\n";

describe("versions", () => {
  it("each load of an origin is its next version: changed, or the same source as the one before", async () => {
    const store = await page();
    const v = async (text: string) => (await store.getState().load(text, "echo_env.js", "file")).version!;
    const v1 = await v(A);
    const v2 = await v(B);
    const v3 = await v(B);
    expect([v1.number, v2.number, v3.number]).toEqual([1, 2, 3]);
    expect(v1.previous).toBeNull();
    expect(v2.previous).toEqual({ number: 1, fingerprint: v1.fingerprint });
    expect(v2.fingerprint).not.toBe(v1.fingerprint);
    expect(v3.fingerprint).toBe(v2.fingerprint);
    // The entry on the page carries it; generation (views redraw) still goes up at each load.
    const entry = store.getState().environments.find((e) => e.origin === "echo_env.js")!;
    expect(entry.version).toEqual(v3);
    expect(entry.generation).toBe(3);
  });

  it("loads in quick succession are numbered in the order they were asked", async () => {
    const store = await page();
    const first = store.getState().load(A, "echo_env.js", "file");
    const second = store.getState().load(B, "echo_env.js", "file");
    void first;
    expect((await second).version).toMatchObject({ number: 2, previous: { number: 1 } });
  });
});

describe("kept in this browser", () => {
  it("a picked module is kept, offered after a reload (not loaded), and its kept copy loads as the next version", async () => {
    let store = await page();
    await store.getState().load(A, "echo_env.js", "file");
    const loaded = await store.getState().load(B, "echo_env.js", "file");
    await vi.waitFor(() => expect(store.getState().kept.map((k) => k.version?.number)).toEqual([2]));
    expect(store.getState().kept[0]).toMatchObject({ origin: "echo_env.js", source: "file", text: B, name: "echo_env", error: null });

    vi.resetModules();
    store = await page();
    expect(store.getState().environments).toEqual([]);
    expect(store.getState().kept.map((k) => k.origin)).toEqual(["echo_env.js"]);
    expect(FakeHostWorker.loads).toEqual([A, B]);
    const again = await store.getState().loadKept("echo_env.js");
    expect(again).toMatchObject({ status: "ready", source: "file", version: { number: 3, fingerprint: loaded.version!.fingerprint, previous: { number: 2 } } });
    expect(FakeHostWorker.loads).toEqual([A, B, B]);
  });

  it("a link's missing environment: the kept copies that loaded as it and are not on the page", async () => {
    const { keptCopiesFor } = await import("./user-environments.js");
    const copy = (origin: string, name: string | null, error: { message: string; stack: string } | null = null) =>
      ({ id: origin, origin, source: "file", text: "", version: null, name, title: name, error, keptAt: 0 }) as const;
    const kept = [copy("a.js", "echo_env"), copy("b.js", "echo_env"), copy("c.js", null, { message: "x", stack: "" }), copy("d.js", "other_env")];
    expect(keptCopiesFor(["echo_env"], kept, [{ origin: "b.js" }]).map((k) => k.origin)).toEqual(["a.js"]);
    expect(keptCopiesFor(["nope"], kept, [])).toEqual([]);
  });

  it("a module that failed to load is kept with its error (line and column), shown after a reload", async () => {
    let store = await page();
    const failed = await store.getState().load("SYNTAX", "typo_env.js", "file");
    expect(failed.status).toBe("failed");
    await vi.waitFor(() => expect(store.getState().kept).toHaveLength(1));
    vi.resetModules();
    store = await page();
    expect(store.getState().kept[0]).toMatchObject({ origin: "typo_env.js", name: null, error: { message: "Unexpected token '}' at typo_env.js:3:29" } });
    expect(store.getState().kept[0]!.error!.stack).toContain("typo_env.js:3:29: Unexpected token");
  });

  it("a URL's module is kept as fetched: its kept copy loads with no fetch, still as a module from that URL", async () => {
    let store = await page();
    const url = "http://localhost:9/far_env.js";
    await store.getState().loadUrl(url);
    expect(fetches).toEqual([url]);
    await vi.waitFor(() => expect(store.getState().kept.map((k) => k.source)).toEqual(["url"]));
    vi.resetModules();
    store = await page();
    expect(await store.getState().loadKept(url)).toMatchObject({ status: "ready", source: "url", origin: url });
    expect(fetches).toEqual([url]);
  });

  it("remove and forget: gone after a reload", async () => {
    let store = await page();
    await store.getState().load(A, "a_env.js", "file");
    await store.getState().load("// name: b_env\n", "b_env.js", "file");
    await vi.waitFor(() => expect(store.getState().kept).toHaveLength(2));
    const removing = store.getState().remove("a_env.js");
    // Listed until its kept copy is forgotten, then gone from both lists at once.
    expect(store.getState().environments.map((e) => e.origin)).toContain("a_env.js");
    await removing;
    expect(store.getState().environments.map((e) => e.origin)).not.toContain("a_env.js");
    expect(store.getState().kept.map((k) => k.origin)).toEqual(["b_env.js"]);
    vi.resetModules();
    store = await page();
    expect(store.getState().kept.map((k) => k.origin)).toEqual(["b_env.js"]);
    await store.getState().forget("b_env.js");
    expect(store.getState().kept).toEqual([]);
    vi.resetModules();
    expect((await page()).getState().kept).toEqual([]);
  });

  it("this checkout's modules are not kept (they are in the checkout)", async () => {
    const store = await page();
    await store.getState().load(A, "environments/echo_env.js", "checkout");
    await new Promise((r) => setTimeout(r, 20));
    expect(store.getState().kept).toEqual([]);
    expect(fake.settled.filter((s) => s.includes("put"))).toEqual([]);
  });

  it("a full quota: the panel is told why, and the module still works in the page", async () => {
    const store = await page();
    fake.plan = ["quota"];
    const loaded = await store.getState().load(A, "echo_env.js", "file");
    expect(loaded.status).toBe("ready");
    await vi.waitFor(() =>
      expect(store.getState().storageProblem).toBe(
        "could not keep echo_env.js in this browser: the browser's storage for this site is full (QuotaExceededError). echo_env.js works on this page, but a reload will not offer it again.",
      ),
    );
    expect(store.getState().kept).toEqual([]);
    expect(store.getState().environments.map((e) => [e.origin, e.status])).toEqual([["echo_env.js", "ready"]]);
  });

  it("no IndexedDB at all: the list says so, loading still works", async () => {
    vi.stubGlobal("indexedDB", undefined);
    const store = await page();
    expect(store.getState().storageProblem).toBe(
      "could not list the modules kept in this browser: this browser gives the page no IndexedDB: modules kept on an earlier visit cannot be offered.",
    );
    expect((await store.getState().load(A, "echo_env.js", "file")).status).toBe("ready");
  });
});

describe("hosts under a run", () => {
  /** What a run hears of its hosts. */
  const listener = () => {
    const heard: string[] = [];
    return { heard, news: (name: string) => ({ answering: () => heard.push(`${name} answers`), replaced: (_port: unknown, why: string) => heard.push(`${name} replaced: ${why}`), gone: (why: string) => heard.push(`${name} gone: ${why}`) }) };
  };

  it("a host that answers no ping after a run's step overran is started again from the same text, and the run hears of its new port", async () => {
    const store = await page();
    const { connectRun } = await import("./user-environments.js");
    FakeHostWorker.nextStuck = true;
    await store.getState().load(A, "echo_env.js", "file");
    const run = listener();
    const hold = connectRun(["echo_env"], run.news);
    expect(hold.ports).toHaveLength(1);
    vi.useFakeTimers();
    try {
      hold.overdue("echo_env");
      await vi.advanceTimersByTimeAsync(HOST_ANSWER_GRACE_MS + 10);
    } finally {
      vi.useRealTimers();
    }
    const [stuck, restarted] = FakeHostWorker.started;
    expect(stuck!.terminated).toBe(true);
    expect(restarted!.terminated).toBe(false);
    expect(FakeHostWorker.loads).toEqual([A, A]);
    expect(run.heard).toEqual([expect.stringMatching(/^echo_env replaced: environment 'echo_env' \(echo_env\.js\) stopped answering after a step ran past its deadline/)]);
    const entry = store.getState().environments.find((e) => e.origin === "echo_env.js")!;
    expect(entry).toMatchObject({ status: "ready", restarts: { count: 1 } });
    // The same text: the same version.
    expect(entry.version?.number).toBe(1);
  });

  it("a host that answers is left as it is, and the run hears that it answers", async () => {
    const store = await page();
    const { connectRun } = await import("./user-environments.js");
    await store.getState().load(A, "echo_env.js", "file");
    const run = listener();
    const hold = connectRun(["echo_env"], run.news);
    hold.overdue("echo_env");
    await vi.waitFor(() => expect(run.heard).toEqual(["echo_env answers"]));
    expect(FakeHostWorker.started).toHaveLength(1);
    expect(FakeHostWorker.started[0]!.terminated).toBe(false);
  });

  it("a host ended while its ping waits (the module loaded again after its run) is not started again", async () => {
    const store = await page();
    const { connectRun } = await import("./user-environments.js");
    FakeHostWorker.nextStuck = true;
    await store.getState().load(A, "echo_env.js", "file");
    const hold = connectRun(["echo_env"], listener().news);
    vi.useFakeTimers();
    try {
      hold.overdue("echo_env");
      hold.release();
      const reloaded = store.getState().load(B, "echo_env.js", "file");
      await vi.advanceTimersByTimeAsync(HOST_ANSWER_GRACE_MS + 10);
      vi.useRealTimers();
      await reloaded;
    } finally {
      vi.useRealTimers();
    }
    // Before, the stuck host's missed ping started version A again, in a Worker nothing ever ended.
    expect(FakeHostWorker.loads).toEqual([A, B]);
    expect(FakeHostWorker.started.map((w) => w.terminated)).toEqual([true, false]);
  });

  it("a module loaded again or removed while a run steps it keeps its old host until the run ends", async () => {
    const store = await page();
    const { connectRun } = await import("./user-environments.js");
    await store.getState().load(A, "echo_env.js", "file");
    const hold = connectRun(["echo_env"], listener().news);
    await store.getState().load(B, "echo_env.js", "file");
    const [old, fresh] = FakeHostWorker.started;
    expect(old!.terminated).toBe(false);
    const next = connectRun(["echo_env"], listener().news);
    hold.release();
    expect(old!.terminated).toBe(true);
    // The run started after the reload holds the new host, which outlives its removal until that run ends.
    await store.getState().remove("echo_env.js");
    expect(fresh!.terminated).toBe(false);
    next.release();
    expect(fresh!.terminated).toBe(true);
  });
});
