import { useEffect, useState } from "react";
import { useJsonlImport } from "./ImportJsonl.js";
import type { CheckpointSummary } from "./run/checkpoints.js";
import { discardRecovered, listRecoverable, onRecoverableChange, openRecoveredRead, readRecovered } from "./run/recovery.js";
import { claimShow, session } from "./store.js";

/**
 * Runs a closed or reloaded page interrupted (their last checkpoint in this browser): each can be shown (and then
 * exported, forked and compared like a saved run; it joins the saved runs) or discarded. A checkpoint is read and
 * checked as an imported file is: a damaged one (a line cut short, a corrupted line) shows its problems with their
 * lines and field paths, and opens its valid lines only when the user asks.
 */
export function RecoveredRuns() {
  const [runs, setRuns] = useState<CheckpointSummary[]>([]);
  /** The checkpoints were listed once (what a test waits for before it says nothing is on offer). */
  const [listed, setListed] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const { importFile, panel } = useJsonlImport(
    () => undefined, // every call brings its own `accept`
    (message) => setProblem(message),
  );
  useEffect(() => {
    const refresh = () =>
      void listRecoverable()
        .then(setRuns, (e: Error) => {
          setRuns([]);
          setProblem(`could not list the runs to recover: ${e.message}`);
        })
        .finally(() => setListed(true));
    refresh();
    return onRecoverableChange(refresh);
  }, []);
  if (runs.length === 0 && !problem && !panel) return <span hidden data-testid="recovered-runs-listed" data-listed={listed} />;
  // A storage failure's reason in words (its StorageError's), else the error's message.
  const why = (e: Error) => (e as { reason?: string }).reason ?? e.message;
  const act = (what: Promise<void>, claim?: AbortSignal, failed = "could not recover the run") =>
    what.catch((e: Error) => {
      if (!claim?.aborted) setProblem(`${failed}: ${why(e)}`);
    });
  // Claims what the page shows next (../store.ts `claimShow`): a newer import, open or run supersedes it.
  const open = async (id: string, claim: AbortSignal) => {
    setProblem(null);
    const found = await readRecovered(id);
    if (!found || claim.aborted) return;
    await importFile(found.file, {
      verb: "open",
      signal: claim,
      accept: (read, _name, skipped, built) => openRecoveredRead(session, found.recovered, read, skipped, built, claim),
    });
  };
  const openClaimed = (id: string) => {
    const claim = claimShow();
    void act(open(id, claim), claim);
  };
  return (
    <section className="recovered" aria-label="Recovered runs">
      <span hidden data-testid="recovered-runs-listed" data-listed={listed} />
      {runs.map((run) => (
        <p key={run.id} className="recovered-run" data-testid="recovered-run">
          <span data-testid="recovered-run-summary">
            Recovered run from {new Date(run.updatedAt).toLocaleString()}: {run.finished} of {run.total} samples finished
          </span>{" "}
          <button className="secondary" onClick={() => openClaimed(run.id)}>
            Show recovered run
          </button>{" "}
          <button className="link" onClick={() => void act(discardRecovered(run.id), undefined, "could not discard the recovered run")}>
            Discard
          </button>
        </p>
      ))}
      {panel}
      {problem && <p className="error">{problem}</p>}
    </section>
  );
}
