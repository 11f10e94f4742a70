/**
 * "Fork from here": the small editor a transcript turn opens. Edit the assistant text (the environment answers the
 * edited text, then the policy goes on), or the observation (the policy goes on from the edited log), or change
 * the policy's seed or sampling settings; then run the fork. Texts are edited and shown as plain text.
 */

import { useEffect, useMemo, useRef, useState } from "react";
import type { Scenario } from "../../scenario/schema.js";
import type { SampleView } from "../run/run-model.js";
import { useShown } from "../session/hooks.js";
import { isLive } from "../session/run-session.js";
import { useLab } from "../store.js";
import { changeablePolicyFields, forkOptions, keptTurnsWords, type ForkEdit, type PolicyChanges } from "./fork-scenario.js";
import "./fork.css";

const FIELD_LABELS: Record<keyof PolicyChanges, string> = {
  seed: "Seed",
  error_rate: "Error rate",
  temperature: "Temperature",
  top_k: "Top-k",
  top_p: "Top-p",
};

const testId = (field: keyof PolicyChanges) => `fork-${field.replace("_", "-")}`;

export function ForkEditor() {
  const editor = useLab((s) => s.forks.editor);
  const message = useLab((s) => s.forks.message);
  const { closeEditor, runFork } = useLab.getState().forks;
  const model = useShown((s) => s.model);
  const scenario = useShown((s) => s.scenario);
  const status = useShown((s) => s.status);
  const selected = useLab((s) => s.selection.selected);
  if (!editor || !model || editor.model !== model || editor.sample !== selected || !scenario) return null;
  const sample = model.samples[editor.sample];
  if (!sample) return null;
  return (
    <EditorBody
      key={`${editor.sample}:${editor.turn}`}
      scenario={scenario}
      sample={sample}
      turn={editor.turn}
      maxRolloutTurns={model.summary.maxRolloutTurns}
      live={isLive(status)}
      message={message}
      onCancel={closeEditor}
      onRun={(edit, policy) => runFork({ edit, policy })}
    />
  );
}

function EditorBody(props: {
  scenario: Scenario;
  sample: SampleView;
  turn: number;
  maxRolloutTurns: number;
  live: boolean;
  message: string | null;
  onCancel(): void;
  onRun(edit: ForkEdit, policy: PolicyChanges): void;
}) {
  const { scenario, sample, turn, maxRolloutTurns, live, message, onCancel, onRun } = props;
  const t = sample.turns[turn];
  const originalAssistant = t?.assistantIndex != null ? (sample.messages[t.assistantIndex]?.content ?? "") : "";
  const originalObservation = t?.observationIndex != null ? (sample.messages[t.observationIndex]?.content ?? "") : "";
  const options = forkOptions(sample, turn, maxRolloutTurns);
  const fields = changeablePolicyFields(scenario.policy);
  const current = scenario.policy as Record<string, unknown>;

  const [assistant, setAssistant] = useState(originalAssistant);
  const [observation, setObservation] = useState(originalObservation);
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(fields.map((f) => [f, current[f] === undefined ? "" : String(current[f])])),
  );
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // Nothing returned: in recent Chromium, scrollIntoView returns a promise, which React would take for a cleanup.
    void root.current?.scrollIntoView({ block: "nearest" });
  }, []);

  const assistantEdited = assistant !== originalAssistant;
  const observationEdited = !assistantEdited && observation !== originalObservation;
  const policy = useMemo(() => {
    const changes: PolicyChanges = {};
    const problems: string[] = [];
    for (const f of fields) {
      const text = (values[f] ?? "").trim();
      if (text === "") continue;
      const value = Number(text);
      if (!Number.isFinite(value)) problems.push(`${FIELD_LABELS[f]}: expected a number`);
      else if ((f === "seed" || f === "top_k") && !Number.isInteger(value)) problems.push(`${FIELD_LABELS[f]}: expected an integer`);
      else if (value !== current[f]) changes[f] = value;
    }
    return { changes, problems };
  }, [values, fields, current]);

  const plan = assistantEdited
    ? `Starts before turn ${turn}: your text is turn ${turn}'s response, the environment answers it, then the policy goes on.`
    : observationEdited
      ? `Starts after turn ${turn}: your observation replaces the environment's in the log (the environment's state after turn ${turn} is kept), then the policy goes on from turn ${turn + 1}.`
      : `Re-runs from turn ${turn} with the policy settings below${Object.keys(policy.changes).length ? "" : " (nothing changed: the same turns again, for a policy that is seeded or scripted)"}.`;
  const kept = observationEdited ? turn + 1 : turn;

  return (
    <div className="fork-editor" data-testid="fork-editor" ref={root}>
      <div className="fork-editor-head">
        <strong>
          Fork sample {sample.sample} at turn {turn}
        </strong>
        <span className="hint">
          {" "}
          · {keptTurnsWords(kept)} kept · {maxRolloutTurns - kept} turn{maxRolloutTurns - kept === 1 ? "" : "s"} of budget left
        </span>
      </div>
      {options.fork ? (
        <>
          <p className="error" data-testid="fork-editor-error">
            {options.fork}
          </p>
          <button type="button" className="secondary" data-testid="fork-cancel" onClick={onCancel}>
            Close
          </button>
        </>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (policy.problems.length) return;
            const edit: ForkEdit = assistantEdited
              ? { kind: "assistant", text: assistant }
              : observationEdited
                ? { kind: "observation", text: observation }
                : { kind: "none" };
            onRun(edit, policy.changes);
          }}
        >
          <label className="field wide">
            <span>Assistant text (turn {turn})</span>
            <textarea
              data-testid="fork-assistant"
              aria-label="Fork: assistant text"
              spellCheck={false}
              value={assistant}
              disabled={observationEdited}
              onChange={(e) => setAssistant(e.target.value)}
            />
          </label>
          <label className="field wide">
            <span>
              Observation (turn {turn}){options.observation ? ` · cannot be edited: ${options.observation}` : assistantEdited ? " · the environment answers the edited text" : ""}
            </span>
            <textarea
              data-testid="fork-observation"
              aria-label="Fork: observation"
              spellCheck={false}
              value={observation}
              disabled={assistantEdited || options.observation !== null}
              onChange={(e) => setObservation(e.target.value)}
            />
          </label>
          {fields.length > 0 ? (
            <div className="fork-fields">
              {fields.map((f) => (
                <label key={f} className="field">
                  <span>{FIELD_LABELS[f]}</span>
                  <input
                    data-testid={testId(f)}
                    aria-label={`Fork: ${FIELD_LABELS[f]}`}
                    inputMode="decimal"
                    placeholder="default"
                    value={values[f] ?? ""}
                    onChange={(e) => setValues({ ...values, [f]: e.target.value })}
                  />
                </label>
              ))}
              {scenario.policy.kind === "model" && scenario.greedy && <p className="hint">This run decodes greedily: sampling settings have no effect.</p>}
            </div>
          ) : (
            <p className="hint">A {scenario.policy.kind} policy has no seed or sampling settings to change.</p>
          )}
          <p className="hint" data-testid="fork-plan-summary">
            {plan}
          </p>
          {policy.problems.length > 0 && <p className="error">{policy.problems.join("\n")}</p>}
          {message && (
            <p className="error" data-testid="fork-editor-error">
              {message}
            </p>
          )}
          <div className="fork-actions">
            <button type="submit" data-testid="fork-run" disabled={live || policy.problems.length > 0}>
              Run fork
            </button>
            <button type="button" className="secondary" data-testid="fork-cancel" onClick={onCancel}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </div>
  );
}
