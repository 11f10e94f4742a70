/** The retries' waits and the concurrency limit, on their own. */

import { describe, expect, it } from "vitest";
import { ConcurrencyLimit } from "./limiter.js";
import { backoffMs, retryAfterMs } from "./retry.js";

describe("retry waits", () => {
  it("backoff doubles from the base up to the cap, jittered into [0.5, 1) of it", () => {
    const timing = { baseMs: 100, maxMs: 1000, random: () => 0 };
    expect([0, 1, 2, 3, 4, 5].map((r) => backoffMs(r, timing))).toEqual([50, 100, 200, 400, 500, 500]);
    expect(backoffMs(2, { ...timing, random: () => 0.999 })).toBe(400);
  });

  it("Retry-After as seconds or as an HTTP date; anything else is ignored", () => {
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(retryAfterMs("2", now)).toBe(2000);
    expect(retryAfterMs(" 0 ", now)).toBe(0);
    expect(retryAfterMs("Wed, 01 Jan 2025 00:00:05 GMT", now)).toBe(5000);
    expect(retryAfterMs("Tue, 31 Dec 2024 23:59:00 GMT", now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});

describe("ConcurrencyLimit", () => {
  it("runs at most max tasks at once, the rest in the order they came; a cancelled wait gives up its turn", async () => {
    const limit = new ConcurrencyLimit(2);
    const releases: (() => void)[] = [];
    const started: string[] = [];
    const task = (name: string) => () =>
      new Promise<string>((resolve) => {
        started.push(name);
        releases.push(() => resolve(name));
      });
    const controller = new AbortController();
    const a = limit.run(task("a"));
    const b = limit.run(task("b"));
    const c = limit.run(task("c"), controller.signal);
    const d = limit.run(task("d"));
    await Promise.resolve();
    expect(started).toEqual(["a", "b"]);
    controller.abort();
    await expect(c).rejects.toMatchObject({ name: "AbortError" });
    releases[0]!();
    await a;
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(started).toEqual(["a", "b", "d"]);
    expect(limit.inFlight).toBe(2);
    releases[1]!();
    releases[2]!();
    expect(await Promise.all([b, d])).toEqual(["b", "d"]);
    expect(limit.inFlight).toBe(0);
    expect(() => new ConcurrencyLimit(0)).toThrow("max_concurrency: expected a positive integer, got 0");
  });
});
