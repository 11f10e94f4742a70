import { describe, expect, it } from "vitest";
import { abortError, isAbortError, LabError } from "./errors.js";
import { SchemaError } from "./protocol/schema.js";
import { fromWireError, PendingCalls, RemoteError, requestIds, toWireError } from "./rpc.js";

describe("errors on the wire", () => {
  it("keep their name, message, stack and code across structured cloning, rebuilt by name", () => {
    const wire = structuredClone(toWireError(new SchemaError("bad schema")));
    expect(wire).toMatchObject({ name: "SchemaError", message: "bad schema", code: "invalid_tool_schema" });
    expect(wire.stack).toContain("bad schema");
    const back = fromWireError(wire);
    expect(back).toBeInstanceOf(RemoteError);
    expect(back).toBeInstanceOf(LabError);
    expect([back.name, back.message, (back as LabError).code]).toEqual(["SchemaError", "bad schema", "invalid_tool_schema"]);
    expect(back.stack).toBe(wire.stack);
  });

  it("come back as abort errors when they were (ours or the platform's)", () => {
    expect(isAbortError(fromWireError(structuredClone(toWireError(abortError("stop")))))).toBe(true);
    expect(isAbortError(fromWireError(structuredClone(toWireError(new DOMException("gone", "AbortError")))))).toBe(true);
    expect(isAbortError(fromWireError(toWireError(new TypeError("x"))))).toBe(false);
  });

  it("take anything thrown, and a stack rewriter (a module's blob: URL named as its file)", () => {
    expect(toWireError("plain text")).toMatchObject({ name: "Error", message: "plain text", code: null });
    const error = new Error("boom");
    error.stack = "Error: boom\n    at step (blob:http://x/123:4:5)";
    expect(toWireError(error, (s) => s.replace(/blob:\S+?(?=:\d)/, "my_env.js")).stack).toContain("at step (my_env.js:4:5)");
  });
});

describe("PendingCalls", () => {
  it("gives each call an id, answers it once, and keeps what came with it", async () => {
    const calls = new PendingCalls<string, (t: string) => void>();
    const seen: string[] = [];
    const a = calls.open((t) => seen.push(`a:${t}`));
    const b = calls.open((t) => seen.push(`b:${t}`));
    expect(a.id).not.toBe(b.id);
    calls.extra(b.id)?.("token");
    expect(calls.resolve(b.id, "B")).toBe(true);
    expect(calls.resolve(b.id, "again")).toBe(false);
    expect(calls.reject(a.id, new Error("no"))).toBe(true);
    await expect(b.promise).resolves.toBe("B");
    await expect(a.promise).rejects.toThrow("no");
    expect(seen).toEqual(["b:token"]);
    expect(calls.size).toBe(0);
  });

  it("rejects every waiting call when the other side dies, and every later one", async () => {
    const calls = new PendingCalls<number>();
    const waiting = [calls.open(undefined), calls.open(undefined)];
    calls.rejectAll(new Error("the worker crashed"));
    for (const w of waiting) await expect(w.promise).rejects.toThrow("the worker crashed");
    await expect(calls.open(undefined).promise).rejects.toThrow("the worker crashed");
  });

  it("several of them given one counter never give the same id (one after another on fresh workers)", async () => {
    const ids = requestIds();
    const first = new PendingCalls<number>(ids);
    const a = first.open(undefined);
    first.rejectAll(new Error("gone"));
    await expect(a.promise).rejects.toThrow("gone");
    const second = new PendingCalls<number>(ids);
    const b = second.open(undefined);
    expect([a.id, b.id]).toEqual([1, 2]);
    expect(second.resolve(a.id, 0)).toBe(false);
    expect(second.resolve(b.id, 5)).toBe(true);
    await expect(b.promise).resolves.toBe(5);
    expect(new PendingCalls<number>().open(undefined).id).toBe(1);
  });
});
