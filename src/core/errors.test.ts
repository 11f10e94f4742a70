import { describe, expect, it } from "vitest";
import { abortError, AbortError, isAbortError, LabError } from "./errors.js";
import { SchemaError } from "./protocol/schema.js";
import { RolloutFailure } from "./rollout/sync.js";

describe("the errors' vocabulary", () => {
  it("gives every lab error a code and a literal name (minifiers rename classes)", () => {
    const e = new SchemaError("bad schema");
    expect(e).toBeInstanceOf(LabError);
    expect(e).toBeInstanceOf(Error);
    expect([e.name, e.code, e.message]).toEqual(["SchemaError", "invalid_tool_schema", "bad schema"]);
    expect([new RolloutFailure("x").name, new RolloutFailure("x").code]).toEqual(["RolloutFailure", "rollout_failed"]);
    expect(new LabError("plain").code).toBe("lab_error");
  });

  it("has one abort error, recognised with the platform's own", () => {
    const e = abortError("generation cancelled");
    expect(e).toBeInstanceOf(AbortError);
    expect([e.name, e.code, e.message]).toEqual(["AbortError", "aborted", "generation cancelled"]);
    expect(isAbortError(e)).toBe(true);
    expect(isAbortError(new DOMException("stop", "AbortError"))).toBe(true);
    expect(isAbortError(new Error("boom"))).toBe(false);
    const controller = new AbortController();
    controller.abort();
    expect(isAbortError(new Error("boom"), controller.signal)).toBe(true);
  });
});
