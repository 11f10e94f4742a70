/**
 * The forks of the run shown, as branches of it: the original first, then each fork ("sample 2 @ turn 3: edited
 * assistant text") with its state; one click shows a run, another compares a fork with the run it was forked from.
 */

import { useShown } from "../session/hooks.js";
import { useLab } from "../store.js";
import { keptTurnsWords } from "./fork-scenario.js";
import { forkOfModel, forksOfTree, rootOfModel, type ForkRecord } from "./forks-slice.js";
import "./fork.css";

export function ForksPanel() {
  const forks = useLab((s) => s.forks.forks);
  const model = useShown((s) => s.model);
  const status = useShown((s) => s.status);
  const { show, compare } = useLab.getState().forks;
  const tree = forksOfTree(forks, model);
  if (!model || tree.length === 0) return null;
  const shown = forkOfModel(forks, model);
  const root = rootOfModel(forks, model);
  return (
    <section className="panel forks" data-testid="forks-panel">
      <h2>Forks</h2>
      {shown && (
        <p className="fork-banner" data-testid="fork-banner">
          Showing fork {shown.id}: {shown.label}. Its transcript is {shown.parentId ? `fork ${shown.parentId}'s` : "the original's"}{" "}
          {keptTurnsWords(shown.plan.keptTurns)} followed by the fork's own turns; its metrics cover the whole forked episode.
        </p>
      )}
      <ol className="fork-list">
        <li data-testid="fork-item" data-fork="original" data-active={!shown}>
          <button type="button" className="link" data-testid="fork-show-original" disabled={!shown} onClick={() => show(null)}>
            Original run
          </button>{" "}
          <span className="hint">
            {root?.samples.length} sample{root?.samples.length === 1 ? "" : "s"}
          </span>
        </li>
        {tree.map((f) => {
          const active = f.model === model;
          const fStatus = active ? status : f.status;
          return (
            <li key={f.id} data-testid="fork-item" data-fork={f.id} data-active={active} data-status={fStatus} style={{ marginLeft: `${depth(forks, f.id)}rem` }}>
              <button type="button" className="link" data-testid="fork-show" disabled={active} onClick={() => show(f.id)}>
                Fork {f.id}
              </button>{" "}
              <span data-testid="fork-label">{f.label}</span> <span className={`tx-chip fork-status fork-status-${fStatus}`}>{fStatus}</span>{" "}
              <button type="button" className="link" data-testid="fork-compare" onClick={() => compare(f.id)}>
                compare with {f.parentId ? `fork ${f.parentId}` : "the original"}
              </button>
              {f.error && fStatus === "failed" && <pre className="error">{f.error}</pre>}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

function depth(forks: readonly ForkRecord[], id: string): number {
  let d = 0;
  for (let f = forks.find((x) => x.id === id); f?.parentId; f = forks.find((x) => x.id === f!.parentId)) d += 1;
  return d * 1.2;
}
