/**
 * Importing a JSONL file in the page: the file is streamed through the checker (`readJsonl`, in a Worker:
 * `readJsonlOffThread`), with the lines read so far shown for a big one. A clean file is handed on at once; a file with problems imports nothing: the first
 * problems are shown with their lines and field paths, with how many there are, and the valid lines are imported
 * only when the user asks ("Import the N valid lines"). Runs kept in this browser (a saved run, a recovered
 * checkpoint) are opened the same way: `importFile(file, { verb: "open", accept })` ("Open the N valid lines").
 *
 * With `options.preview`, a big file (`PREVIEW_MIN_BYTES` or more) is previewed while it is read
 * (./run/preview-import.ts): its checked samples are shown as they come, as a preview that is no import; when the
 * whole file is checked, the same run model is handed to `accept` (clean, or its valid lines asked for), or given
 * up ("Don't import", Stop, an error), which puts back the run the preview set aside.
 */

import { useEffect, useRef, useState, type ReactNode } from "react";
import { formatProblem, type JsonlReadResult } from "./run/jsonl.js";
import { readFilesOffThread, warmJsonlReader } from "./run/jsonl-offthread.js";
import { importHold } from "./run/import-hold.js";
import { PREVIEW_MIN_BYTES, PreviewImport, type PreviewTarget } from "./run/preview-import.js";
import type { RunModel } from "./run/run-model.js";

type ImportState =
  | { phase: "reading"; name: string; linesRead: number; bytesRead: number; totalBytes: number | null; abort: AbortController }
  | { phase: "problems"; name: string; read: JsonlReadResult; abort: AbortController; preview: PreviewImport | null; verb: "import" | "open" };

/** The import under way in a `useJsonlImport`: how to stop it, its preview, and how it lets go of its call's signal. */
type ActiveImport = { abort: AbortController; preview: PreviewImport | null; release(): void };

/** The run model a preview built of the read's valid samples (ended as `buildRun` of the read would be). */
export type BuiltRun = { model: RunModel; scenario: unknown };

export interface JsonlImportOptions {
  /**
   * The page's side of a preview of a big file (`labPreview` in ./store.ts): where its model is shown. `controls.stop`
   * stops the reading; `controls.replaced` is to be called when the page shows another run instead.
   */
  preview?: (name: string, controls: { stop(): void; replaced(): void }) => PreviewTarget;
  /** Files at least this big are previewed. Default `PREVIEW_MIN_BYTES`. */
  previewMinBytes?: number;
}

/** When the page is idle: the reader's Worker is started ahead of the next import (its first samples come sooner). */
function warmWhenIdle(): () => void {
  const idle = (globalThis as { requestIdleCallback?: (f: () => void, o?: { timeout: number }) => number }).requestIdleCallback;
  if (idle) {
    const id = idle(warmJsonlReader, { timeout: 2000 });
    return () => (globalThis as { cancelIdleCallback?: (id: number) => void }).cancelIdleCallback?.(id);
  }
  const id = setTimeout(warmJsonlReader, 500);
  return () => clearTimeout(id);
}

/** What `accept` is: a clean read, or the valid lines of a read with problems once the user asked for them. */
export type AcceptRead = (read: JsonlReadResult, name: string, skipped: number, built?: BuiltRun) => void | Promise<void>;

/**
 * One `importFile` call's own ways: opening a run kept in this browser (a saved run, a recovered checkpoint, read
 * as a file named by its title) goes through the same checks and the same problems panel as an import.
 */
export interface ImportCall {
  /** The panel's words: "open" (`Nothing was opened`, `Open the N valid lines`). Default "import". */
  verb?: "import" | "open";
  /** What takes this file's read, instead of the hook's `accept`. */
  accept?: AcceptRead;
  /**
   * Aborts when something newer supersedes this import (the page's `claimShow`, ./store.ts): its reading stops, its
   * panel and preview go, and nothing is said of it (an `accept` that throws once it aborted is not reported).
   */
  signal?: AbortSignal;
}

/**
 * `accept(read, name, skipped, built)` gets a clean read, or the read of a file with problems once the user chose to
 * import its valid lines (`skipped`: how many lines were left out); `built`: the run model its preview built, if it
 * had one. It may throw; its message goes to `onError`.
 */
export function useJsonlImport(
  accept: AcceptRead,
  onError: (message: string) => void,
  options: JsonlImportOptions = {},
): { importFile: (file: File, how?: ImportCall) => Promise<void>; importFiles: (files: readonly File[], how?: ImportCall) => Promise<void>; panel: ReactNode } {
  const [state, setState] = useState<ImportState | null>(null);
  /** The import under way (reading, or its problems on show): a new one ends it. */
  const active = useRef<ActiveImport | null>(null);
  /** The import under way ends (whatever ends it): it lets go of its call's signal. */
  const deactivate = () => {
    active.current?.release();
    active.current = null;
  };
  const previewing = Boolean(options.preview);
  const reading = state?.phase === "reading";
  // The lab's import (the one that previews big files) keeps a reader Worker started, for the next file.
  useEffect(() => (previewing && !reading ? warmWhenIdle() : undefined), [previewing, reading]);

  /** The current call's own ways (one import at a time: a new one ends the last). */
  const call = useRef<ImportCall>({});

  /** The read to `accept`; `built`: the preview's model, ended as the import's (null: build it from the read). */
  const hand = (read: JsonlReadResult, name: string, skipped: number, built: () => BuiltRun | null | undefined) => {
    const { verb = "import", accept: own, signal } = call.current;
    const failed = (e: unknown) => {
      if (!signal?.aborted) onError(`could not ${verb} ${name}: ${(e as Error).message}`);
    };
    try {
      void Promise.resolve((own ?? accept)(read, name, skipped, built() ?? undefined)).catch(failed);
    } catch (e) {
      failed(e);
    }
  };

  /** Several files are one run's (its steps), read in the order given. */
  const importFiles = async (files: readonly File[], how: ImportCall = {}) => {
    if (files.length === 0) return;
    const name = files.length === 1 ? files[0]!.name : `${files[0]!.name} and ${files.length - 1} more`;
    const size = files.reduce((n, f) => n + f.size, 0);
    if (how.signal?.aborted) return;
    const previous = active.current;
    deactivate();
    if (previous) {
      previous.abort.abort();
      previous.preview?.discard();
    }
    call.current = how;
    const abort = new AbortController();
    const me: ActiveImport = { abort, preview: null, release: () => undefined };
    active.current = me;
    if (options.preview && size >= (options.previewMinBytes ?? PREVIEW_MIN_BYTES)) {
      me.preview = new PreviewImport(
        options.preview(name, {
          stop: () => abort.abort(),
          replaced: () => {
            if (active.current !== me) return;
            deactivate();
            me.preview?.supersede();
            abort.abort();
            setState((s) => (s?.abort === abort ? null : s));
          },
        }),
      );
    }
    const preview = me.preview;
    // Superseded (another import, a run started, another run shown): it ends as a replaced preview's import does,
    // putting back what its preview set aside (whatever supersedes it shows its own run when it has one).
    const superseded = () => {
      if (active.current !== me) return;
      deactivate();
      abort.abort();
      me.preview?.discard();
      setState((s) => (s?.abort === abort ? null : s));
    };
    if (how.signal) {
      const signal = how.signal;
      signal.addEventListener("abort", superseded, { once: true });
      // Removed as the import ends: the signal (its claim) may outlive it, and must not keep its preview's model.
      me.release = () => signal.removeEventListener("abort", superseded);
    }
    let last = 0;
    setState({ phase: "reading", name, linesRead: 0, bytesRead: 0, totalBytes: size, abort });
    let read: JsonlReadResult;
    try {
      // A dump's step number may be in its file's name (NeMo RL's train_data_step12.jsonl): each file is read with it.
      read = await readFilesOffThread(files, {
        signal: abort.signal,
        onProgress: (p) => {
          const now = performance.now();
          if (now - last < 100) return;
          last = now;
          setState({ phase: "reading", name, ...p, abort });
          preview?.progress({ ...p, phase: "reading", badLines: 0 });
        },
        // The test hook's hold (./run/import-hold.ts, `?faults=1` only; null on any other page): the read waits
        // after its first samples, until the test lets it go on.
        ...(preview ? { onSamples: (samples) => preview.add(samples), holdAfterFirstSamples: () => importHold.next(abort.signal) } : {}),
      });
      // The last samples handed are added to the preview's model (a few slices at most).
      await preview?.drained();
      if (abort.signal.aborted) throw abort.signal.reason;
    } catch (e) {
      if (active.current !== me) return;
      deactivate();
      preview?.discard();
      setState(null);
      onError(abort.signal.aborted ? `stopped reading ${name}` : `could not read ${name}: ${(e as Error).message}`);
      return;
    }
    if (active.current !== me) return;
    if (read.problemCount === 0) {
      deactivate();
      setState(null);
      hand(read, name, 0, () => preview?.keep(read));
    } else {
      preview?.progress({ linesRead: read.linesRead, bytesRead: read.bytesRead, totalBytes: size, phase: "problems", badLines: read.badLines });
      setState({ phase: "problems", name, read, abort, preview, verb: how.verb ?? "import" });
    }
  };

  const importFile = (file: File, how: ImportCall = {}) => importFiles([file], how);

  let panel: ReactNode = null;
  if (state?.phase === "reading") {
    const pct = state.totalBytes ? ` (${Math.floor((100 * state.bytesRead) / state.totalBytes)}%)` : "";
    panel = (
      <p className="hint import-progress" data-testid="import-progress">
        reading {state.name}: {state.linesRead.toLocaleString("en")} lines{pct}{" "}
        <button className="link" onClick={() => state.abort.abort()}>
          stop
        </button>
      </p>
    );
  } else if (state?.phase === "problems") {
    const { name, read, preview } = state;
    const done = () => {
      if (active.current?.abort === state.abort) deactivate();
      setState(null);
    };
    const more = read.problemCount - read.problems.length;
    const sampleCount = read.samples.length;
    const opening = state.verb === "open";
    panel = (
      <div className="import-problems" data-testid="import-problems" role="alert">
        <p>
          <strong>{name}</strong>: {read.badLines.toLocaleString("en")} of {read.linesRead.toLocaleString("en")} lines{" "}
          {read.badLines === 1 ? "has a problem" : "have problems"}; {read.validLines.toLocaleString("en")} valid (
          {sampleCount.toLocaleString("en")} {sampleCount === 1 ? "sample" : "samples"}). Nothing was {opening ? "opened" : "imported"}
          {preview?.state === "shown" ? " (the samples shown are a preview)" : ""}.
        </p>
        <ul>
          {read.problems.map((p, i) => (
            <li key={i} data-testid="import-problem" data-line={p.line}>
              {formatProblem(p)}
            </li>
          ))}
        </ul>
        {more > 0 && (
          <p className="hint" data-testid="import-problems-more">
            … and {more.toLocaleString("en")} more {more === 1 ? "problem" : "problems"} ({read.problemCount.toLocaleString("en")} in all)
          </p>
        )}
        <div className="row">
          {sampleCount > 0 && (
            <button
              data-testid="import-valid-anyway"
              onClick={() => {
                done();
                hand(read, name, read.badLines, () => preview?.keep(read));
              }}
            >
              {opening ? "Open" : "Import"} the {read.validLines.toLocaleString("en")} valid {read.validLines === 1 ? "line" : "lines"}
            </button>
          )}
          <button
            className="secondary"
            data-testid="import-cancel"
            onClick={() => {
              done();
              preview?.discard();
            }}
          >
            {sampleCount > 0 ? "Don't import" : "Close"}
          </button>
        </div>
      </div>
    );
  }
  return { importFile, importFiles, panel };
}

/**
 * A file picker for a run export (JSONL or result JSON) or a dump; picking the same file again picks it again. With
 * `onFiles`, several files can be picked at once (one run's steps).
 */
export function JsonlFileButton(props: { label: string; ariaLabel: string; className?: string; onFile?(file: File): void; onFiles?(files: File[]): void }) {
  return (
    <label className={props.className ? `file-button ${props.className}` : "file-button"}>
      {props.label}
      <input
        aria-label={props.ariaLabel}
        type="file"
        multiple={Boolean(props.onFiles)}
        accept=".jsonl,.json,.parquet,application/x-ndjson"
        onChange={(e) => {
          const files = [...(e.target.files ?? [])];
          e.target.value = "";
          if (files.length && props.onFiles) props.onFiles(files);
          else if (files[0]) props.onFile?.(files[0]);
        }}
      />
    </label>
  );
}
