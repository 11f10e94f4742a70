/**
 * What the comparison view compares: side A and side B, each a sample of a source. A source is the current run,
 * a run saved in this browser (IndexedDB), or a JSONL file added in the comparison view (an export, or a runner
 * result's samples; adding one does not replace the current run). Saved runs are loaded when first chosen and
 * kept; a live current run is read through the lab's store and follows its version.
 *
 * Until the user picks a side, the sides follow the lab's selection: A is the selected sample, B the next one,
 * so opening the view compares two samples of the run at once.
 */

import { create } from "zustand";
import { buildRun, importJsonl, type JsonlReadResult } from "../run/jsonl.js";
import type { RunModel } from "../run/run-model.js";
import { listRuns, loadRun, onSavedRunsChange, type SavedRunSummary } from "../run/saved-runs.js";

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

interface CompareState {
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
  /** Follows the lab's selection (while `auto`). */
  follow(selected: number, samples: number): void;
  refreshSaved(): Promise<void>;
  ensureLoaded(source: SourceKey): void;
  /** Adds a JSONL file as a source and puts it on side B (errors go to `message`). */
  addFile(name: string, text: string): void;
  /** The same for a file already read (`readJsonl`): its valid lines; `skipped` lines with problems were left out. */
  addRead(name: string, read: JsonlReadResult, skipped?: number): void;
  setMessage(message: string | null): void;
}

let fileCounter = 0;

export const useCompare = create<CompareState>((set, get) => ({
  a: { source: "current", sample: 0 },
  b: { source: "current", sample: 1 },
  auto: true,
  onlyDiffering: false,
  saved: [],
  savedModels: {},
  files: [],
  message: null,
  setSide(which, side) {
    set({ [which]: side, auto: false } as Partial<CompareState>);
    get().ensureLoaded(side.source);
  },
  swap: () => set({ a: get().b, b: get().a, auto: false }),
  setOnlyDiffering: (onlyDiffering) => set({ onlyDiffering }),
  follow(selected, samples) {
    const { auto, a, b } = get();
    if (!auto || samples === 0) return;
    const next = samples > 1 ? (selected + 1) % samples : selected;
    if (a.source === "current" && a.sample === selected && b.source === "current" && b.sample === next) return;
    set({ a: { source: "current", sample: selected }, b: { source: "current", sample: next } });
  },
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
    const put = (loaded: Loaded) => set({ savedModels: { ...get().savedModels, [id]: loaded } });
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
}));

function addModel(name: string, model: RunModel, skipped: number) {
  const id = String(++fileCounter);
  const { b, files } = useCompare.getState();
  const count = `${model.samples.length} ${model.samples.length === 1 ? "sample" : "samples"}`;
  useCompare.setState({
    files: [...files, { id, name, model }],
    b: { source: `file:${id}`, sample: Math.min(b.sample, model.samples.length - 1) },
    auto: false,
    message: `added ${name}: ${count}${skipped ? ` (${skipped} ${skipped === 1 ? "line" : "lines"} with problems left out)` : ""}`,
  });
}

// The list of saved runs follows saves and deletes anywhere in the page.
onSavedRunsChange(() => void useCompare.getState().refreshSaved());

/** The run model behind a source, or why there is none. */
export function resolveSource(source: SourceKey, current: RunModel | null, state: Pick<CompareState, "savedModels" | "files">): Loaded {
  if (source === "current") return current ? { model: current } : { error: "no current run" };
  if (source.startsWith("saved:")) return state.savedModels[source.slice("saved:".length)] ?? { loading: true };
  if (source.startsWith("file:")) {
    const file = state.files.find((f) => f.id === source.slice("file:".length));
    return file ? { model: file.model } : { error: "this file is no longer loaded" };
  }
  return { error: `unknown source ${source}` };
}
