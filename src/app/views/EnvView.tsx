/**
 * The environment's own view of the selected sample: its state after the selected turn (or the latest state),
 * drawn by the environment's `view` (a puzzle board, the calculator's steps, the workspace's files, or text).
 * Unknown environments (and those without a view) fall back to the metadata as JSON. A user environment draws
 * its view in its own Worker, so that view arrives a moment later. Everything is rendered as text.
 */

import { useEffect, useMemo, useState } from "react";
import type { Metadata } from "../../core/index.js";
import { findEnvironment, type EnvironmentLookup, type EnvView as EnvViewData } from "../../envs/index.js";
import { pageEnvironmentLookup, useUserEnvironments } from "../envs/user-environments.js";
import type { RunModel } from "../run/run-model.js";
import { useRun } from "../session/hooks.js";
import { envStateAt } from "./charts/run-states.js";
import "./views.css";

export interface EnvViewProps {
  model: RunModel;
  sample: number;
  /** The turn whose resulting state to show; null for the latest. */
  turn: number | null;
  /** The environment name of the sample's task (the scenario's `envs.<task>.env`); null when unknown. */
  envName: string | null;
}

export function EnvView({ model, sample, turn, envName }: EnvViewProps) {
  const run = useRun(model);
  // A user environment that loads (or hot-reloads) later draws its view again.
  const userEnvironments = useUserEnvironments((s) => s.environments);
  const state = useMemo(() => envStateAt(run.model, sample, turn), [run, sample, turn]);
  const pending = useMemo(() => state && viewOf(envName, state.metadata, pageEnvironmentLookup(userEnvironments)), [state, envName, userEnvironments]);
  const [resolved, setResolved] = useState<{ for: unknown; view: EnvViewData } | null>(null);
  useEffect(() => {
    if (!(pending instanceof Promise)) return;
    let live = true;
    void pending.then((view) => live && setResolved({ for: pending, view }));
    return () => {
      live = false;
    };
  }, [pending]);
  const drawn = pending instanceof Promise ? (resolved?.for === pending ? resolved.view : null) : pending;
  const shown = state && drawn && { view: drawn, when: state.when, task: state.task };

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

/**
 * The environment's view, or the metadata as JSON text when the environment is unknown, has no view, or its view
 * fails. A user environment's view answers with a promise (it is drawn in the environment's Worker).
 */
export function viewOf(envName: string | null, metadata: Metadata, lookup: EnvironmentLookup = findEnvironment): EnvViewData | Promise<EnvViewData> {
  const env = envName ? lookup(envName) : undefined;
  const fallback = (title: string, note = "") => ({ kind: "text" as const, title, text: note + json(metadata) });
  if (!env?.view) return fallback(env?.title ?? (envName ? `Environment state (${envName})` : "Environment state"));
  const failed = (e: unknown) => fallback(env.title, `The view failed: ${(e as Error).message}\n\n`);
  try {
    const view = env.view(metadata);
    return view instanceof Promise ? view.catch(failed) : view;
  } catch (e) {
    return failed(e);
  }
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
