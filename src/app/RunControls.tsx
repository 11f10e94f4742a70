import { useMemo } from "react";
import { runOutcomes, statusDetail } from "./run/outcome.js";
import { useRun, useShown } from "./session/hooks.js";
import { isLive } from "./session/run-session.js";
import { session, startRun } from "./store.js";

/** Run, pause, step one turn, resume, stop (partial results kept), and the run's state in words. */
export function RunControls() {
  const status = useShown((s) => s.status);
  const run = useRun(useShown((s) => s.model));
  // "finished with 3 errors": a run whose samples did not all end well does not read as a clean one.
  const detail = useMemo(() => (run && status === "finished" ? statusDetail(status, runOutcomes(run.model.samples)) : null), [run, status]);
  const live = isLive(status);
  return (
    <div className="controls" role="toolbar" aria-label="Run controls">
      <button onClick={startRun} disabled={live} title="Start a run with this set-up (R)">
        {status === "finished" || status === "failed" ? "Run again" : "Run"}
      </button>
      <button className="secondary" onClick={() => session.pause()} disabled={status !== "running"} title="Pause between turns (P)">
        Pause
      </button>
      <button className="secondary" onClick={() => session.step()} disabled={status !== "paused"} title="Run one more turn (S)">
        Step
      </button>
      <button className="secondary" onClick={() => session.resume()} disabled={status !== "paused"} title="Resume (P)">
        Resume
      </button>
      <button className="secondary" onClick={() => session.stop()} disabled={!live} title="Stop; finished samples and the partial run are kept">
        Stop
      </button>
      <span className={`status status-${status}${detail ? " with-problems" : ""}`}>
        Status: <strong data-testid="run-status">{status}</strong>
        {detail && (
          <span className="status-detail" data-testid="run-status-detail">
            {" "}
            {detail}
          </span>
        )}
      </span>
    </div>
  );
}
