/**
 * What the comparison view compares: side A and side B, each a sample of a source. A source is the current run,
 * a run saved in this browser (IndexedDB), or a JSONL file added in the comparison view (an export, or a runner
 * result's samples; adding one does not replace the current run). Saved runs are loaded when first chosen and
 * kept; a live current run is read through the lab's store and follows its version.
 *
 * Until the user picks a side, the sides follow the lab's selection (`comparedSides`): A is the selected sample, B
 * the next one, so opening the view compares two samples of the run at once.
 *
 * A slice of the page's store (../state/lab-state.ts).
 */

import { buildRun, importJsonl, type JsonlReadResult } from "../run/jsonl.js";
import type { RunModel } from "../run/run-model.js";
import { listRuns, loadRun, type SavedRunSummary } from "../run/saved-runs.js";
import type { SliceSet } from "../state/slice.js";

/** `current`, `saved:<id>` or `file:<id>`. */
export type SourceKey = string;

export interface CompareSide {
  source: SourceKey;
  sample: number;
}

export interface CompareFile {
  id: string;
  name: string;
  model: RunModel;
  /** How the source is named when it is not a file (a fork and its original, added by the forks list). */
  label?: string;
}

export type Loaded = { model: RunModel } | { loading: true } | { error: string };

export interface CompareSlice {
  /** The sides the user picked (`auto` false); while `auto`, `comparedSides` follows the lab's selection instead. */
  a: CompareSide;
  b: CompareSide;
  /** The sides follow the lab's selection until the user picks one. */
  auto: boolean;
  onlyDiffering: boolean;
  saved: SavedRunSummary[];
  /** Saved runs loaded so far, by id. */
  savedModels: Record<string, Loaded>;
  files: CompareFile[];
  message: string | null;
  setSide(which: "a" | "b", side: CompareSide): void;
  swap(): void;
  setOnlyDiffering(on: boolean): void;
  refreshSaved(): Promise<void>;
  ensureLoaded(source: SourceKey): void;
  /** Adds a JSONL file as a source and puts it on side B (errors go to `message`). */
  addFile(name: string, text: string): void;
  /** The same for a file already read (`readJsonl`): its valid lines; `skipped` lines with problems were left out. */
  addRead(name: string, read: JsonlReadResult, skipped?: number): void;
  setMessage(message: string | null): void;
}

let fileCounter = 0;

/** Where the lab looks (its selection), and how many samples the run shown has: what `auto` sides follow. */
export type Followed = () => { selected: number; samples: number };

/** The sides compared: the picked ones, or while `auto` the selected sample of the current run and the next one. */
export function comparedSides(compare: Pick<CompareSlice, "a" | "b" | "auto">, followed: ReturnType<Followed>): { a: CompareSide; b: CompareSide } {
  const { selected, samples } = followed;
  if (!compare.auto || samples === 0) return { a: compare.a, b: compare.b };
  const next = samples > 1 ? (selected + 1) % samples : selected;
  return { a: { source: "current", sample: selected }, b: { source: "current", sample: next } };
}

export function createCompareSlice(set: SliceSet<CompareSlice>, get: () => CompareSlice, followed: Followed): CompareSlice {
  const sides = () => comparedSides(get(), followed());
  const addModel = (name: string, model: RunModel, skipped: number) => {
    const id = String(++fileCounter);
    const { b } = sides();
    const count = `${model.samples.length} ${model.samples.length === 1 ? "sample" : "samples"}`;
    set((compare) => ({
      ...sides(),
      files: [...compare.files, { id, name, model }],
      b: { source: `file:${id}`, sample: Math.min(b.sample, model.samples.length - 1) },
      auto: false,
      message: `added ${name}: ${count}${skipped ? ` (${skipped} ${skipped === 1 ? "line" : "lines"} with problems left out)` : ""}`,
    }));
  };
  return {
    a: { source: "current", sample: 0 },
    b: { source: "current", sample: 1 },
    auto: true,
    onlyDiffering: false,
    saved: [],
    savedModels: {},
    files: [],
    message: null,
    setSide(which, side) {
      set({ ...sides(), [which]: side, auto: false });
      get().ensureLoaded(side.source);
    },
    swap() {
      const { a, b } = sides();
      set({ a: b, b: a, auto: false });
    },
    setOnlyDiffering: (onlyDiffering) => set({ onlyDiffering }),
    async refreshSaved() {
      try {
        set({ saved: await listRuns() });
      } catch {
        set({ saved: [] });
      }
    },
    ensureLoaded(source) {
      if (!source.startsWith("saved:")) return;
      const id = source.slice("saved:".length);
      if (get().savedModels[id]) return;
      const put = (loaded: Loaded) => set((compare) => ({ savedModels: { ...compare.savedModels, [id]: loaded } }));
      put({ loading: true });
      loadRun(id).then(
        (text) => {
          if (text === null) return put({ error: "this saved run is gone" });
          try {
            put({ model: importJsonl(text).model });
          } catch (e) {
            put({ error: (e as Error).message });
          }
        },
        (e: Error) => put({ error: e.message }),
      );
    },
    addFile(name, text) {
      let model: RunModel;
      try {
        model = importJsonl(text).model;
      } catch (e) {
        set({ message: `could not read ${name}: ${(e as Error).message}` });
        return;
      }
      addModel(name, model, 0);
    },
    addRead(name, read, skipped = 0) {
      let model: RunModel;
      try {
        model = buildRun(read).model;
      } catch (e) {
        set({ message: `could not read ${name}: ${(e as Error).message}` });
        return;
      }
      addModel(name, model, skipped);
    },
    setMessage: (message) => set({ message }),
  };
}

/** The run model behind a source, or why there is none. */
export function resolveSource(source: SourceKey, current: RunModel | null, state: Pick<CompareSlice, "savedModels" | "files">): Loaded {
  if (source === "current") return current ? { model: current } : { error: "no current run" };
  if (source.startsWith("saved:")) return state.savedModels[source.slice("saved:".length)] ?? { loading: true };
  if (source.startsWith("file:")) {
    const file = state.files.find((f) => f.id === source.slice("file:".length));
    return file ? { model: file.model } : { error: "this file is no longer loaded" };
  }
  return { error: `unknown source ${source}` };
}
