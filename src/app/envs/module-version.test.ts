import { createHash } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { changeOf, describeVersion, fingerprint, formatLoadTime, nextVersion, sha256, versionParts } from "./module-version.js";

const at = (h: number, m: number, s: number, day = 2) => new Date(2025, 2, day, h, m, s).getTime();

describe("module versions", () => {
  it("numbers each load of an origin and says whether its text changed since the load before", async () => {
    const a = await fingerprint("export default { name: 'a' };\n");
    const b = await fingerprint("export default { name: 'a', fixed: true };\n");
    const v1 = nextVersion(null, a, at(10, 42, 5));
    const v2 = nextVersion(v1, b, at(10, 42, 6));
    const v3 = nextVersion(v2, b, at(10, 42, 7));
    expect([v1.number, v2.number, v3.number]).toEqual([1, 2, 3]);
    expect([changeOf(v1), changeOf(v2), changeOf(v3)]).toEqual(["first", "changed", "same"]);
    expect(describeVersion(v1, at(12, 0, 0))).toBe(`v1 · loaded 10:42:05 · ${a}`);
    expect(describeVersion(v2, at(12, 0, 0))).toBe(`v2 · loaded 10:42:06 · ${b} (changed)`);
    expect(describeVersion(v3, at(12, 0, 0))).toBe(`v3 · loaded 10:42:07 · ${b} (same source as v2)`);
    // Back to the first text is a change against the load before it.
    expect(versionParts(nextVersion(v3, a, at(10, 43, 0))).change).toBe("(changed)");
  });

  it("a kept copy's version goes on from its number", () => {
    const kept = { number: 3, fingerprint: "a1b2c3d4" };
    expect(nextVersion(kept, "a1b2c3d4", 0)).toEqual({ number: 4, loadedAt: 0, fingerprint: "a1b2c3d4", previous: kept });
  });

  it("gives the date too for a load of another day", () => {
    expect(formatLoadTime(at(9, 5, 1, 2), at(12, 0, 0, 2))).toBe("09:05:01");
    expect(formatLoadTime(at(9, 5, 1, 2), at(12, 0, 0, 3))).toBe("2025-03-02 09:05:01");
  });
});

describe("fingerprint", () => {
  afterEach(() => vi.unstubAllGlobals());
  const texts = ["", "abc", "é ∑ 🙂\n", "x".repeat(55), "y".repeat(56), "z".repeat(64), "w".repeat(1000)];

  it("is the first 8 hex digits of the text's SHA-256 (UTF-8)", async () => {
    for (const text of texts) expect(await fingerprint(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex").slice(0, 8));
  });

  it("is the same without crypto.subtle (a page served over plain http): the JavaScript SHA-256", async () => {
    for (const text of texts) expect(Buffer.from(sha256(new TextEncoder().encode(text))).toString("hex")).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
    vi.stubGlobal("crypto", {});
    expect(await fingerprint("abc")).toBe("ba7816bf");
  });

  it("tells texts apart that differ in one character", async () => {
    expect(await fingerprint("step(a)")).not.toBe(await fingerprint("step(b)"));
  });
});
