/**
 * The environment's own view of the selected sample: its state after the selected turn (or the latest state),
 * drawn by the environment's `view` (a puzzle board, the calculator's steps, the workspace's files, or text).
 * Unknown environments fall back to the metadata as JSON. Everything is rendered as text.
 */

import { useMemo } from "react";
import type { Metadata } from "../../core/index.js";
import { findEnvironment, type EnvView as EnvViewData } from "../../envs/index.js";
import type { RunModel } from "../run/run-model.js";
import { envStateAt } from "./charts/run-states.js";
import "./views.css";

export interface EnvViewProps {
  model: RunModel;
  version: number;
  sample: number;
  /** The turn whose resulting state to show; null for the latest. */
  turn: number | null;
  /** The environment name of the sample's task (the scenario's `envs.<task>.env`); null when unknown. */
  envName: string | null;
}

export function EnvView({ model, version, sample, turn, envName }: EnvViewProps) {
  const shown = useMemo(() => {
    const state = envStateAt(model, sample, turn);
    return state && { view: viewOf(envName, state.metadata), when: state.when, task: state.task };
  }, [model, version, sample, turn, envName]);

  if (!shown) return <p className="hint">No sample selected.</p>;
  const { view, when, task } = shown;
  return (
    <div className="env" data-testid="env-view" data-kind={view.kind}>
      <div className="env-head">
        <strong>{view.title}</strong>
        <span className="hint">
          {" "}
          · sample {sample} · {task}
          {envName ? ` (${envName})` : ""} · {when}
        </span>
      </div>
      <EnvBody view={view} />
      {"caption" in view && view.caption && <p className="env-caption">{view.caption}</p>}
    </div>
  );
}

/** The environment's view, or the metadata as JSON text when the environment is unknown or its view fails. */
export function viewOf(envName: string | null, metadata: Metadata): EnvViewData {
  const env = envName ? findEnvironment(envName) : undefined;
  if (env) {
    try {
      return env.view(metadata);
    } catch (e) {
      return { kind: "text", title: env.title, text: `The view failed: ${(e as Error).message}\n\n${json(metadata)}` };
    }
  }
  return { kind: "text", title: envName ? `Environment state (${envName})` : "Environment state", text: json(metadata) };
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? "null";
  } catch {
    return String(value);
  }
}

function EnvBody({ view }: { view: EnvViewData }) {
  switch (view.kind) {
    case "grid":
      return (
        <div
          className="env-board"
          data-testid="puzzle-board"
          role="grid"
          aria-label={`${view.size}×${view.size} board`}
          style={{ gridTemplateColumns: `repeat(${view.size}, 1fr)`, width: `${Math.min(view.size * 3.2, 22)}rem` }}
        >
          {view.cells.map((row, r) =>
            row.map((cell, c) => (
              <span key={`${r}-${c}`} role="gridcell" className={cell === null ? "env-tile blank" : "env-tile"} aria-label={cell === null ? "blank" : String(cell)}>
                {cell === null ? "" : String(cell)}
              </span>
            )),
          )}
        </div>
      );
    case "steps":
      return (
        <div className="env-steps">
          <div>
            Problem: <code>{view.problem}</code>
          </div>
          {view.steps.length === 0 ? (
            <p className="hint">No steps.</p>
          ) : (
            <ol>
              {view.steps.map((s, i) => (
                <li key={i}>
                  <code>{s.label}</code> = <code>{s.value}</code>
                </li>
              ))}
            </ol>
          )}
        </div>
      );
    case "files":
      return view.files.length === 0 ? (
        <p className="hint">No files.</p>
      ) : (
        <ul className="env-files">
          {view.files.map((f) => (
            <li key={f.path}>
              <details open={view.files.length <= 3}>
                <summary>
                  <code>{f.path}</code>{" "}
                  <span className="hint">
                    {lineCount(f.content)} line{lineCount(f.content) === 1 ? "" : "s"}, {f.content.length} chars
                  </span>
                </summary>
                <pre>{f.content}</pre>
              </details>
            </li>
          ))}
        </ul>
      );
    case "text":
      return <pre className="env-text">{view.text}</pre>;
  }
}

const lineCount = (text: string) => (text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0));
