import { describe, expect, it } from "vitest";
import { renderBudget } from "./render-budget.js";

/** A fake clock with frames, timers and microtasks run by hand. */
function harness(renderMs: number) {
  let t = 0;
  const frames: (() => void)[] = [];
  const timers: { at: number; f: () => void }[] = [];
  const micro: (() => void)[] = [];
  const flushes: number[] = [];
  const bump = renderBudget(
    () => {
      flushes.push(t);
      t += renderMs; // the synchronous work the update causes
    },
    { share: 0.25, maxWaitMs: 250, now: () => t, frame: (f) => frames.push(f), later: (f, ms) => timers.push({ at: t + ms, f }), microtask: (f) => micro.push(f) },
  );
  const advance = (to: number) => {
    for (;;) {
      const due = timers.filter((x) => x.at <= to).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      timers.splice(timers.indexOf(due), 1);
      t = Math.max(t, due.at);
      due.f();
    }
    t = Math.max(t, to);
  };
  const frame = () => {
    const f = frames.splice(0);
    f.forEach((g) => g());
    micro.splice(0).forEach((g) => g());
  };
  return { bump, frame, advance, flushes, get now() { return t; } };
}

describe("render budget", () => {
  it("a cheap update is drawn at the next frame, once for any number of bumps", () => {
    const h = harness(1);
    h.bump();
    h.bump();
    h.frame();
    expect(h.flushes).toEqual([0]);
    h.advance(16);
    h.bump();
    h.frame();
    expect(h.flushes).toEqual([0, 16]);
  });

  it("an expensive update makes the next one wait three times its cost (a quarter of the main thread), at most 250 ms", () => {
    const h = harness(40);
    h.bump();
    h.frame();
    expect(h.flushes).toEqual([0]);
    h.advance(50);
    h.bump();
    h.frame();
    expect(h.flushes).toEqual([0]); // waits until 40 + 120
    h.advance(160);
    h.frame();
    expect(h.flushes).toEqual([0, 160]);
    const slow = harness(400);
    slow.bump();
    slow.frame();
    slow.bump();
    slow.advance(400 + 250);
    slow.frame();
    expect(slow.flushes).toEqual([0, 650]);
  });
});
