/**
 * What the page says about keeping runs (src/app/KeepNotices.tsx shows it): a run that could not be saved in this
 * browser (a full quota, a broken IndexedDB), with the reason, what is left of it (its checkpoint, or nothing) and
 * an Export of it; a live run stopped and kept because something else replaced it; a live run whose checkpoints
 * cannot be written. A run counts as saved only once its transaction committed (./idb.ts): until then, and when it
 * never does, the page says so here.
 */

import { create } from "zustand";

export interface KeepNotice {
  id: number;
  /** "error": something is not kept (the user should act); "info": what the page did with a run. */
  tone: "error" | "info";
  text: string;
  /** The run it speaks of, to be exported as a JSONL file (its name, and the export when asked). */
  exportRun?: { name: string; blob: () => Promise<Blob> };
  /** Tries again what failed; the notice goes when it succeeds (and says why when it fails again). */
  retry?: { label: string; run: () => Promise<void> };
  /** Several notices about one thing (one run's checkpoint): a later one with the same key replaces the earlier. */
  key?: string;
}

interface KeepNoticesState {
  notices: KeepNotice[];
}

export const useKeepNotices = create<KeepNoticesState>(() => ({ notices: [] }));

let counter = 0;

/** Shows a notice (replacing one with the same `key`); returns its id. */
export function notify(notice: Omit<KeepNotice, "id">): number {
  const id = ++counter;
  const others = useKeepNotices.getState().notices.filter((n) => notice.key === undefined || n.key !== notice.key);
  useKeepNotices.setState({ notices: [...others, { ...notice, id }] });
  return id;
}

export function dismiss(id: number): void {
  useKeepNotices.setState({ notices: useKeepNotices.getState().notices.filter((n) => n.id !== id) });
}

/** Drops the notices with this key (what they spoke of is settled). */
export function dismissKey(key: string): void {
  useKeepNotices.setState({ notices: useKeepNotices.getState().notices.filter((n) => n.key !== key) });
}

/** Saves `blob` as a file named `name` (the browser's download). */
export function downloadBlob(blob: Blob, name: string): void {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  // Revoked later: revoking at once can cancel the download before the browser has read the Blob.
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}

