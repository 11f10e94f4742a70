import { useEffect, useState } from "react";
import { JsonlFileButton, useJsonlImport, type AcceptRead } from "./ImportJsonl.js";
import { exportJsonlInSlices } from "./run/export-slices.js";
import { buildRunInSlices } from "./run/build-slices.js";
import { deleteRun, listRuns, loadRunBlob, onSavedRunsChange, saveRun, type SavedRunSummary } from "./run/saved-runs.js";
import { shareHash } from "./share-url.js";
import { claimShow, labPreview, useLab } from "./store.js";

/** Share the configuration as a link, export and import runs as JSONL, and reopen runs saved in this browser. */
export function KeepAndShare() {
  const { status, model, runScenario, scenarioText, show, preview } = useLab();
  const [saved, setSaved] = useState<SavedRunSummary[]>([]);
  const [message, setMessage] = useState<string | null>(null);

  useEffect(() => {
    listRuns().then(setSaved, () => setSaved([]));
    // Runs saved elsewhere in the page (a failed run, a recovered one: src/app/run/recovery.ts) join the list.
    return onSavedRunsChange(() => void listRuns().then(setSaved, () => undefined));
  }, []);

  // A finished (or stopped) run is saved once, so it survives a reload.
  useEffect(() => {
    if (status !== "finished" || !model || model.summary.status === "running") return;
    if ((model as { savedAs?: string }).savedAs) return;
    const samples = model.samples.length;
    const meanReward = samples ? model.samples.reduce((a, s) => a + s.totalReward, 0) / samples : null;
    const title = `${model.summary.mode ?? "run"} · ${samples} samples · ${new Date().toLocaleTimeString()}`;
    (model as { savedAs?: string }).savedAs = "pending";
    // Written a few samples at a time into a Blob: a large run's export is no long task of the page.
    exportJsonlInSlices(model, runScenario)
      .then(({ blob }) => saveRun({ title, samples, meanReward }, blob))
      .then(
        (summary) => {
          (model as { savedAs?: string }).savedAs = summary.id;
          setSaved((list) => [summary, ...list]);
        },
        (e: Error) => setMessage(`could not save the run in this browser: ${e.message}`),
      );
  }, [status, model, runScenario]);

  const download = async () => {
    if (!model) return;
    try {
      const { blob } = await exportJsonlInSlices(model, runScenario);
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = `rollout-${Date.now()}.jsonl`;
      a.click();
      URL.revokeObjectURL(a.href);
    } catch (e) {
      setMessage(`could not export the run: ${(e as Error).message}`);
    }
  };

  // The file is streamed and checked; one with problems imports nothing until the user asks for its valid lines. A big
  // one is shown as a preview while it is read (the run model it builds is the import's, once there is one). Each
  // import or open claims what the page shows next (`claimShow`): a newer one, or a run started, supersedes it.
  const { importFile, panel: importPanel } = useJsonlImport(
    () => undefined, // every call brings its own `accept`, with its claim
    setMessage,
    { preview: labPreview },
  );

  const acceptImport =
    (claim: AbortSignal): AcceptRead =>
    async (read, name, skipped, built) => {
      // Rebuilt a few samples at a time (a large run is no long task of the page), until something newer supersedes it.
      const { model: imported, scenario } = built ?? (await buildRunInSlices(read, { signal: claim }));
      if (!show(imported, scenario as never, "finished", claim)) return;
      setMessage(`imported ${name}: ${imported.samples.length} samples${skipped ? ` (${skipped} ${skipped === 1 ? "line" : "lines"} with problems left out)` : ""}`);
    };

  const importPicked = (file: File) => {
    setMessage(null);
    const claim = claimShow();
    importFile(file, { accept: acceptImport(claim), signal: claim }).catch((e: Error) => setMessage(`could not import ${file.name}: ${e.message}`));
  };

  const openSaved = async (run: SavedRunSummary) => {
    // Read and checked as an imported file is (in a Worker, rebuilt in slices): a damaged one shows its problems and
    // opens its valid lines only when asked (it stays saved as it is).
    setMessage(null);
    const claim = claimShow();
    try {
      const stored = await loadRunBlob(run.id);
      if (claim.aborted) return;
      if (!stored) return setMessage(`could not open ${run.title}: it is no longer saved in this browser`);
      await importFile(new File([stored], run.title, { type: "application/x-ndjson" }), {
        verb: "open",
        signal: claim,
        accept: async (read, name, skipped, built) => {
          const { model: restored, scenario } = built ?? (await buildRunInSlices(read, { signal: claim }));
          (restored as { savedAs?: string }).savedAs = run.id;
          if (!show(restored, scenario as never, "finished", claim)) return;
          if (skipped) setMessage(`opened ${name}: ${restored.samples.length} samples (${skipped} ${skipped === 1 ? "line" : "lines"} with problems left out)`);
        },
      });
    } catch (e) {
      if (!claim.aborted) setMessage(`could not open ${run.title}: ${(e as Error).message}`);
    }
  };

  const deleteSaved = (run: SavedRunSummary) =>
    deleteRun(run.id).then(
      () => setSaved((l) => l.filter((r) => r.id !== run.id)),
      (e: Error) => setMessage(`could not delete ${run.title}: ${e.message}`),
    );

  const copyLink = () => {
    let scenario: unknown;
    try {
      scenario = JSON.parse(scenarioText);
    } catch {
      setMessage("the scenario is not valid JSON");
      return;
    }
    const url = `${location.origin}${location.pathname}${shareHash(scenario, true)}`;
    history.replaceState(null, "", url);
    void navigator.clipboard?.writeText(url).catch(() => undefined);
    setMessage("link to this run copied (opening it runs the same scenario with the same seed)");
  };

  return (
    <section className="keep">
      <div className="row">
        <button className="secondary" onClick={copyLink}>
          Share link
        </button>
        <button className="secondary" onClick={download} disabled={!model || status === "running" || preview !== null} title={preview ? "A preview is no run yet: export it once it is imported" : undefined}>
          Export JSONL
        </button>
        <JsonlFileButton label="Import JSONL" ariaLabel="Import JSONL" onFile={importPicked} />
      </div>
      {importPanel}
      {message && <p className="hint" data-testid="keep-message">{message}</p>}
      {saved.length > 0 && (
        <details>
          <summary>Saved runs ({saved.length})</summary>
          <ul className="saved-runs" data-testid="saved-runs">
            {saved.map((run) => (
              <li key={run.id}>
                <button className="link" onClick={() => void openSaved(run)}>
                  {run.title}
                </button>{" "}
                {run.meanReward !== null && <span className="hint">mean reward {run.meanReward.toFixed(3)}</span>}{" "}
                <button className="link" aria-label={`Delete ${run.title}`} onClick={() => void deleteSaved(run)}>
                  delete
                </button>
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
