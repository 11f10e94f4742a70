/**
 * The layout slice: whether the set-up column is open and how wide, and how the views split between the batch (the
 * master) and the selected sample (the detail). Kept in localStorage, so the lab opens as the user left it.
 */

import type { SliceSet } from "./slice.js";

export interface LayoutPrefs {
  setupOpen: boolean;
  /** The set-up column's width in px. */
  setupWidth: number;
  /** The master's share of the views (0–1): its width side by side, its height stacked. */
  split: number;
}

export interface LayoutSlice extends LayoutPrefs {
  toggleSetup(): void;
  setSetupWidth(px: number): void;
  setSplit(fraction: number): void;
}

export const SETUP_WIDTH = { min: 240, max: 640, initial: 340 } as const;
export const SPLIT = { min: 0.2, max: 0.8, initial: 0.45 } as const;
const STORAGE_KEY = "rollout-lab:layout";

export const DEFAULT_LAYOUT: LayoutPrefs = { setupOpen: true, setupWidth: SETUP_WIDTH.initial, split: SPLIT.initial };

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
export const clampSetupWidth = (px: number) => Math.round(clamp(px, SETUP_WIDTH.min, SETUP_WIDTH.max));
export const clampSplit = (f: number) => clamp(f, SPLIT.min, SPLIT.max);

/** The stored preferences, each field checked on its own (a bad or missing one falls back to its default). */
export function readLayoutPrefs(text: string | null): LayoutPrefs {
  let stored: Partial<Record<keyof LayoutPrefs, unknown>> = {};
  try {
    const parsed: unknown = text === null ? null : JSON.parse(text);
    if (parsed && typeof parsed === "object") stored = parsed as typeof stored;
  } catch {
    // Not JSON (written by something else): the defaults.
  }
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  return {
    setupOpen: typeof stored.setupOpen === "boolean" ? stored.setupOpen : DEFAULT_LAYOUT.setupOpen,
    setupWidth: clampSetupWidth(num(stored.setupWidth) ?? DEFAULT_LAYOUT.setupWidth),
    split: clampSplit(num(stored.split) ?? DEFAULT_LAYOUT.split),
  };
}

/** localStorage, where there is one that works (private modes may throw on access). */
function storage(): Storage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null;
  }
}

function save(store: Storage | null, prefs: LayoutPrefs): void {
  try {
    store?.setItem(STORAGE_KEY, JSON.stringify(prefs));
  } catch {
    // Full or refused: the layout still works, for this page.
  }
}

export function createLayoutSlice(set: SliceSet<LayoutSlice>, get: () => LayoutSlice, store: () => Storage | null = storage): LayoutSlice {
  let initial = DEFAULT_LAYOUT;
  try {
    initial = readLayoutPrefs(store()?.getItem(STORAGE_KEY) ?? null);
  } catch {
    // Unreadable storage: the defaults.
  }
  const change = (changes: Partial<LayoutPrefs>) => {
    set(changes);
    const { setupOpen, setupWidth, split } = get();
    save(store(), { setupOpen, setupWidth, split });
  };
  return {
    ...initial,
    toggleSetup: () => change({ setupOpen: !get().setupOpen }),
    setSetupWidth: (px) => change({ setupWidth: clampSetupWidth(px) }),
    setSplit: (fraction) => change({ split: clampSplit(fraction) }),
  };
}
