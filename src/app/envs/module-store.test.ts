/**
 * The kept modules (./module-store.ts) in a fake IndexedDB that fails as Chromium does under a full quota (the
 * request succeeds, the transaction aborts at commit): a module is kept only once its write committed.
 */

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeIndexedDB } from "../run/fake-idb.fixture.js";
import type { KeptModule } from "./module-store.js";

let fake: FakeIndexedDB;
beforeEach(() => {
  vi.resetModules();
  fake = new FakeIndexedDB();
  (globalThis as { indexedDB?: unknown }).indexedDB = fake;
});
afterEach(() => {
  delete (globalThis as { indexedDB?: unknown }).indexedDB;
});

const store = () => import("./module-store.js");

const kept = (origin: string, text: string, changes: Partial<KeptModule> = {}): KeptModule => ({
  id: origin,
  origin,
  source: "file",
  text,
  version: { number: 1, loadedAt: 1000, fingerprint: "a1b2c3d4", previous: null },
  name: "echo_env",
  title: "Echo",
  error: null,
  keptAt: 2000,
  ...changes,
});

describe("the kept modules", () => {
  it("keeps, lists (by origin) and forgets modules; a second copy of an origin replaces the first", async () => {
    const { keepModule, listKeptModules, forgetModule } = await store();
    await keepModule(kept("z_env.js", "z"));
    await keepModule(kept("https://envs.example/far.js", "far", { source: "url" }));
    await keepModule(kept("z_env.js", "z2", { version: { number: 2, loadedAt: 3000, fingerprint: "00ff00ff", previous: { number: 1, fingerprint: "a1b2c3d4" } } }));
    const listed = await listKeptModules();
    expect(listed.map((m) => [m.origin, m.source, m.text, m.version?.number])).toEqual([
      ["https://envs.example/far.js", "url", "far", 1],
      ["z_env.js", "file", "z2", 2],
    ]);
    await forgetModule("z_env.js");
    expect((await listKeptModules()).map((m) => m.origin)).toEqual(["https://envs.example/far.js"]);
  });

  it("are there again after a reload of the page (a fresh module and connection, the same database)", async () => {
    const error = { message: "Unexpected token '}' at typo_env.js:3:29", stack: "typo_env.js:3:29: Unexpected token\n  create() { step( } },\n                  ^" };
    await (await store()).keepModule(kept("typo_env.js", "export default {", { name: null, title: null, error }));
    vi.resetModules();
    const again = await (await store()).listKeptModules();
    expect(again).toEqual([kept("typo_env.js", "export default {", { name: null, title: null, error })]);
  });

  it("a full quota: keeping rejects with the reason, and the copy kept before stays", async () => {
    const { keepModule, listKeptModules } = await store();
    await keepModule(kept("echo_env.js", "first"));
    fake.plan = ["quota"];
    const write = keepModule(kept("echo_env.js", "second"));
    // (vi.resetModules gives each test its own StorageError class: its name says it)
    await expect(write).rejects.toMatchObject({
      name: "StorageError",
      quota: true,
      message: "could not keep echo_env.js in this browser: the browser's storage for this site is full (QuotaExceededError)",
    });
    expect((await listKeptModules()).map((m) => m.text)).toEqual(["first"]);
  });

  it("an aborted forget forgets nothing", async () => {
    const { keepModule, listKeptModules, forgetModule } = await store();
    await keepModule(kept("echo_env.js", "text"));
    fake.plan = ["quota"];
    await expect(forgetModule("echo_env.js")).rejects.toMatchObject({ message: /^could not forget the kept copy of echo_env\.js: / });
    expect((await listKeptModules()).map((m) => m.origin)).toEqual(["echo_env.js"]);
  });

  it("no IndexedDB (a private window that refuses it, or none at all): each call says what could not be done and why", async () => {
    (globalThis as { indexedDB?: unknown }).indexedDB = {
      open() {
        throw new DOMException("The user denied permission to access the database.", "SecurityError");
      },
    };
    const { keepModule, listKeptModules } = await store();
    await expect(keepModule(kept("echo_env.js", "x"))).rejects.toMatchObject({
      message: "could not keep echo_env.js in this browser: SecurityError: The user denied permission to access the database.",
    });
    delete (globalThis as { indexedDB?: unknown }).indexedDB;
    await expect(listKeptModules()).rejects.toMatchObject({ message: "could not list the modules kept in this browser: this browser gives the page no IndexedDB" });
  });

  it("writes and deletes happen in the order asked: kept then forgotten at once stays forgotten", async () => {
    const { keepModule, listKeptModules, forgetModule } = await store();
    const writes = [keepModule(kept("echo_env.js", "x")), forgetModule("echo_env.js")];
    await Promise.all(writes);
    expect(await listKeptModules()).toEqual([]);
    expect(fake.settled).toEqual(["complete put modules", "complete delete modules", "complete read modules"]);
  });

  it("leaves out records that are no module, and drops fields that are not as expected", async () => {
    const { readKept } = await store();
    expect(readKept(null)).toBeNull();
    expect(readKept({ origin: "a.js", source: "file" })).toBeNull();
    expect(readKept({ origin: "a.js", source: "ftp", text: "" })).toBeNull();
    expect(readKept({ origin: "a.js", source: "file", text: "t", version: { number: "2" }, error: { message: 3 }, name: 7 })).toEqual({
      id: "a.js",
      origin: "a.js",
      source: "file",
      text: "t",
      version: null,
      name: null,
      title: null,
      error: null,
      keptAt: 0,
    });
  });
});
