import { useEffect, useState } from "react";
import type { CheckpointSummary } from "./run/checkpoints.js";
import { discardRecovered, listRecoverable, onRecoverableChange, openRecovered } from "./run/recovery.js";

/**
 * Runs a closed or reloaded page interrupted (their last checkpoint in this browser): each can be shown (and then
 * exported, forked and compared like a saved run; it joins the saved runs) or discarded.
 */
export function RecoveredRuns() {
  const [runs, setRuns] = useState<CheckpointSummary[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    const refresh = () => void listRecoverable().then(setRuns, () => setRuns([]));
    refresh();
    return onRecoverableChange(refresh);
  }, []);
  if (runs.length === 0 && !problem) return null;
  const act = (what: Promise<void>) => what.catch((e: Error) => setProblem(`could not recover the run: ${e.message}`));
  return (
    <section className="recovered" aria-label="Recovered runs">
      {runs.map((run) => (
        <p key={run.id} className="recovered-run" data-testid="recovered-run">
          <span data-testid="recovered-run-summary">
            Recovered run from {new Date(run.updatedAt).toLocaleString()}: {run.finished} of {run.total} samples finished
          </span>{" "}
          <button className="secondary" onClick={() => void act(openRecovered(run.id))}>
            Show recovered run
          </button>{" "}
          <button className="link" onClick={() => void act(discardRecovered(run.id))}>
            Discard
          </button>
        </p>
      ))}
      {problem && <p className="error">{problem}</p>}
    </section>
  );
}
