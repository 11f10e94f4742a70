/**
 * `useThrottledValue` with React's hooks stood in for (the tests run without a DOM): not throttled (`ms` ≤ 0), a
 * change is returned in the same render and the effect sets no state (no second render for nothing).
 */

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const hooks = vi.hoisted(() => ({
  state: [] as unknown[],
  ref: null as { current: unknown } | null,
  sets: 0,
  effects: [] as (() => void | (() => void))[],
}));

vi.mock("react", () => ({
  useState: <T>(initial: T) => {
    if (hooks.state.length === 0) hooks.state.push(initial);
    return [hooks.state[0] as T, (v: T) => ((hooks.sets += 1), (hooks.state[0] = v))];
  },
  useRef: <T>(initial: T) => (hooks.ref ??= { current: initial }),
  useEffect: (effect: () => void | (() => void)) => hooks.effects.push(effect),
}));

const { useThrottledValue } = await import("./useThrottled.js");

/** One render with `value`, its effects run (a stand-in component: React's own is mocked above). */
function useOneRender<T>(value: T, ms: number): T {
  hooks.effects = [];
  const out = useThrottledValue(value, ms);
  for (const effect of hooks.effects) effect();
  return out;
}

beforeEach(() => {
  hooks.state = [];
  hooks.ref = null;
  hooks.sets = 0;
});
afterEach(() => vi.useRealTimers());

describe("useThrottledValue", () => {
  it("not throttled: every change at once, and no state set (no extra render)", () => {
    expect(useOneRender(1, 0)).toBe(1);
    expect(useOneRender(2, 0)).toBe(2);
    expect(useOneRender(3, -1)).toBe(3);
    expect(hooks.sets).toBe(0);
  });

  it("throttled: the latest value once the wait is over", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    expect(useOneRender(1, 100)).toBe(1);
    expect(useOneRender(2, 100)).toBe(1);
    vi.advanceTimersByTime(100);
    expect(hooks.sets).toBe(1);
    expect(hooks.state[0]).toBe(2);
    // The next change waits for the end of the 100 ms.
    expect(useOneRender(3, 100)).toBe(2);
    expect(hooks.sets).toBe(1);
    vi.advanceTimersByTime(100);
    expect(hooks.sets).toBe(2);
    expect(hooks.state[0]).toBe(3);
  });
});
