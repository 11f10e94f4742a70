/**
 * What the page says about keeping runs (./run/kept.ts): a run not saved in this browser (the reason, what is left
 * of it, Export, Try saving again), a live run stopped and kept because something replaced it, a live run whose
 * checkpoints cannot be written. Each stays until dismissed (or until what it speaks of is settled).
 */

import { useState } from "react";
import { dismiss, downloadBlob, useKeepNotices, type KeepNotice } from "./run/kept.js";

function Notice({ notice }: { notice: KeepNotice }) {
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const act = async (what: () => Promise<void>, failed: string) => {
    setBusy(true);
    setProblem(null);
    try {
      await what();
    } catch (e) {
      setProblem(`${failed}: ${(e as { reason?: string }).reason ?? (e as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  const { exportRun, retry } = notice;
  return (
    <div className={notice.tone === "error" ? "keep-notice error" : "keep-notice info"} role={notice.tone === "error" ? "alert" : "status"} data-testid="keep-notice" data-tone={notice.tone}>
      <p data-testid="keep-notice-text">{notice.text}</p>
      <div className="row">
        {exportRun && (
          <button className="secondary" disabled={busy} onClick={() => void act(async () => downloadBlob(await exportRun.blob(), exportRun.name), "could not export the run")}>
            Export JSONL
          </button>
        )}
        {retry && (
          <button className="secondary" disabled={busy} onClick={() => void act(retry.run, "still not saved")}>
            {retry.label}
          </button>
        )}
        <button className="link" onClick={() => dismiss(notice.id)}>
          Dismiss
        </button>
      </div>
      {problem && <p data-testid="keep-notice-problem">{problem}</p>}
    </div>
  );
}

export function KeepNotices() {
  const notices = useKeepNotices((s) => s.notices);
  if (notices.length === 0) return null;
  return (
    <section className="keep-notices" aria-label="Keeping runs">
      {notices.map((n) => (
        <Notice key={n.id} notice={n} />
      ))}
    </section>
  );
}
