/**
 * Importing a JSONL file in the page: the file is streamed through the checker (`readJsonl`, in a Worker:
 * `readJsonlOffThread`), with the lines read so far shown for a big one. A clean file is handed on at once; a file with problems imports nothing: the first
 * problems are shown with their lines and field paths, with how many there are, and the valid lines are imported
 * only when the user asks ("Import the N valid lines").
 */

import { useRef, useState, type ReactNode } from "react";
import { formatProblem, type JsonlReadResult } from "./run/jsonl.js";
import { readJsonlOffThread } from "./run/jsonl-offthread.js";

type ImportState =
  | { phase: "reading"; name: string; linesRead: number; bytesRead: number; totalBytes: number | null; abort: AbortController }
  | { phase: "problems"; name: string; read: JsonlReadResult };

/**
 * `accept(read, name, skipped)` gets a clean read, or the read of a file with problems once the user chose to import
 * its valid lines (`skipped`: how many lines were left out). It may throw; its message goes to `onError`.
 */
export function useJsonlImport(
  accept: (read: JsonlReadResult, name: string, skipped: number) => void | Promise<void>,
  onError: (message: string) => void,
): { importFile: (file: File) => Promise<void>; panel: ReactNode } {
  const [state, setState] = useState<ImportState | null>(null);
  const current = useRef<AbortController | null>(null);

  const hand = (read: JsonlReadResult, name: string, skipped: number) => {
    const failed = (e: unknown) => onError(`could not import ${name}: ${(e as Error).message}`);
    try {
      void Promise.resolve(accept(read, name, skipped)).catch(failed);
    } catch (e) {
      failed(e);
    }
  };

  const importFile = async (file: File) => {
    current.current?.abort();
    const abort = new AbortController();
    current.current = abort;
    let last = 0;
    setState({ phase: "reading", name: file.name, linesRead: 0, bytesRead: 0, totalBytes: file.size, abort });
    let read: JsonlReadResult;
    try {
      read = await readJsonlOffThread(file, {
        signal: abort.signal,
        onProgress: (p) => {
          const now = performance.now();
          if (now - last < 100) return;
          last = now;
          setState({ phase: "reading", name: file.name, ...p, abort });
        },
      });
    } catch (e) {
      if (current.current !== abort) return;
      current.current = null;
      setState(null);
      onError(abort.signal.aborted ? `stopped reading ${file.name}` : `could not read ${file.name}: ${(e as Error).message}`);
      return;
    }
    if (current.current !== abort) return;
    current.current = null;
    if (read.problemCount === 0) {
      setState(null);
      hand(read, file.name, 0);
    } else {
      setState({ phase: "problems", name: file.name, read });
    }
  };

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
    const { name, read } = state;
    const more = read.problemCount - read.problems.length;
    const sampleCount = read.samples.length;
    panel = (
      <div className="import-problems" data-testid="import-problems" role="alert">
        <p>
          <strong>{name}</strong>: {read.badLines.toLocaleString("en")} of {read.linesRead.toLocaleString("en")} lines{" "}
          {read.badLines === 1 ? "has a problem" : "have problems"}; {read.validLines.toLocaleString("en")} valid (
          {sampleCount.toLocaleString("en")} {sampleCount === 1 ? "sample" : "samples"}). Nothing was imported.
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
                setState(null);
                hand(read, name, read.badLines);
              }}
            >
              Import the {read.validLines.toLocaleString("en")} valid {read.validLines === 1 ? "line" : "lines"}
            </button>
          )}
          <button className="secondary" data-testid="import-cancel" onClick={() => setState(null)}>
            {sampleCount > 0 ? "Don't import" : "Close"}
          </button>
        </div>
      </div>
    );
  }
  return { importFile, panel };
}

/** A file picker for a run export (JSONL or result JSON); picking the same file again picks it again. */
export function JsonlFileButton(props: { label: string; ariaLabel: string; className?: string; onFile(file: File): void }) {
  return (
    <label className={props.className ? `file-button ${props.className}` : "file-button"}>
      {props.label}
      <input
        aria-label={props.ariaLabel}
        type="file"
        accept=".jsonl,.json,application/x-ndjson"
        onChange={(e) => {
          const file = e.target.files?.[0];
          e.target.value = "";
          if (file) props.onFile(file);
        }}
      />
    </label>
  );
}
