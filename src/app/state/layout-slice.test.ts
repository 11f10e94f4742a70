import { describe, expect, it } from "vitest";
import { createLayoutSlice, DEFAULT_LAYOUT, readLayoutPrefs, SETUP_WIDTH, SPLIT, type LayoutSlice } from "./layout-slice.js";

/** A slice over a plain object, with a Storage of its own. */
function sliceWith(storage: Storage | null) {
  let state = {} as LayoutSlice;
  const set = (changes: Partial<LayoutSlice> | ((s: LayoutSlice) => Partial<LayoutSlice>)) => {
    state = { ...state, ...(typeof changes === "function" ? changes(state) : changes) };
  };
  state = createLayoutSlice(set, () => state, () => storage);
  return () => state;
}

function memoryStorage(initial: Record<string, string> = {}): Storage {
  const items = new Map(Object.entries(initial));
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    getItem: (k) => items.get(k) ?? null,
    key: (i) => [...items.keys()][i] ?? null,
    removeItem: (k) => void items.delete(k),
    setItem: (k, v) => void items.set(k, String(v)),
  };
}

describe("layout preferences", () => {
  it("read back what was stored, each field checked on its own", () => {
    expect(readLayoutPrefs(JSON.stringify({ setupOpen: false, setupWidth: 300, split: 0.6 }))).toEqual({ setupOpen: false, setupWidth: 300, split: 0.6 });
    // A bad field falls back alone; out-of-range values are brought into range.
    expect(readLayoutPrefs(JSON.stringify({ setupOpen: "no", setupWidth: 99999, split: -1 }))).toEqual({
      setupOpen: DEFAULT_LAYOUT.setupOpen,
      setupWidth: SETUP_WIDTH.max,
      split: SPLIT.min,
    });
    expect(readLayoutPrefs("not json")).toEqual(DEFAULT_LAYOUT);
    expect(readLayoutPrefs(null)).toEqual(DEFAULT_LAYOUT);
  });

  it("a change is kept: a new page (a new slice over the same storage) opens as the last one was left", () => {
    const storage = memoryStorage();
    const first = sliceWith(storage);
    first().toggleSetup();
    first().setSetupWidth(280.4);
    first().setSplit(0.7);
    expect(first()).toMatchObject({ setupOpen: false, setupWidth: 280, split: 0.7 });
    expect(sliceWith(storage)()).toMatchObject({ setupOpen: false, setupWidth: 280, split: 0.7 });
  });

  it("sizes stay in range however far a bar is dragged", () => {
    const slice = sliceWith(memoryStorage());
    slice().setSetupWidth(10);
    slice().setSplit(5);
    expect(slice()).toMatchObject({ setupWidth: SETUP_WIDTH.min, split: SPLIT.max });
  });

  it("storage that refuses (a private mode, a full quota) costs nothing but keeping", () => {
    const refusing = memoryStorage();
    refusing.setItem = () => {
      throw new Error("QuotaExceededError");
    };
    refusing.getItem = () => {
      throw new Error("SecurityError");
    };
    const slice = sliceWith(refusing);
    expect(slice()).toMatchObject(DEFAULT_LAYOUT);
    slice().toggleSetup();
    expect(slice().setupOpen).toBe(false);
    const none = sliceWith(null);
    none().setSplit(0.3);
    expect(none().split).toBe(0.3);
  });
});
