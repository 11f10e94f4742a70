import { useEffect, useState } from "react";
import { JsonlFileButton, useJsonlImport, type AcceptRead } from "./ImportJsonl.js";
import { exportJsonlInSlices } from "./run/export-slices.js";
import { buildRunInSlices } from "./run/build-slices.js";
import { downloadBlob } from "./run/kept.js";
import { exportFileName } from "./run/run-names.js";
import { deleteRun, listRuns, loadRunBlob, onSavedRunsChange, renameRun, type SavedRunSummary } from "./run/saved-runs.js";
import { MAX_SHARE_LINK_LENGTH, shareHash } from "../scenario/share-url.js";
import type { Scenario } from "../scenario/schema.js";
import { setKeptAs } from "./run/kept-as.js";
import { useShown } from "./session/hooks.js";
import { claimShow, labPreview, session, useLab } from "./store.js";

/** The Share link's outcome: a link (copied or not), or a link too long to share (the files to share instead). */
type Shared = { url: string; copied: boolean; why?: string; of: "run" | "set-up" } | { tooLong: number } | null;

/**
 * Share the configuration as a link, export and import runs as JSONL, and reopen runs saved in this browser. Runs
 * are saved by ./run/recovery.ts (a run that ends, an imported one); a save that fails is said by ./KeepNotices.tsx.
 */
export function KeepAndShare() {
  const status = useShown((s) => s.status);
  const model = useShown((s) => s.model);
  const runScenario = useShown((s) => s.scenario);
  const preview = useShown((s) => s.preview);
  const scenarioText = useLab((s) => s.form.scenarioText);
  const [saved, setSaved] = useState<SavedRunSummary[]>([]);
  const [message, setMessage] = useState<string | null>(null);
  const [shared, setShared] = useState<Shared>(null);

  const [listProblem, setListProblem] = useState<string | null>(null);

  useEffect(() => {
    // A list the browser's storage refuses is said, not shown as an empty history; the next change lists again.
    const list = () =>
      void listRuns().then(
        (runs) => {
          setSaved(runs);
          setListProblem(null);
        },
        (e: Error) => setListProblem(`${e.message} (the runs kept in this browser are not shown)`),
      );
    list();
    // Runs saved elsewhere in the page (a run that ended, an imported or recovered one: ./run/recovery.ts) join the list.
    return onSavedRunsChange(list);
  }, []);

  const download = async () => {
    if (!model) return;
    try {
      const { blob } = await exportJsonlInSlices(model, runScenario);
      downloadBlob(blob, exportFileName(model, runScenario));
    } catch (e) {
      setMessage(`could not export the run: ${(e as Error).message}`);
    }
  };

  // The file is streamed and checked; one with problems imports nothing until the user asks for its valid lines. A big
  // one is shown as a preview while it is read (the run model it builds is the import's, once there is one). Each
  // import or open claims what the page shows next (`claimShow`): a newer one, or a run started, supersedes it.
  const { importFile, importFiles, panel: importPanel } = useJsonlImport(
    () => undefined, // every call brings its own `accept`, with its claim
    setMessage,
    { preview: labPreview },
  );

  const acceptImport =
    (claim: AbortSignal): AcceptRead =>
    async (read, name, skipped, built) => {
      // Rebuilt a few samples at a time (a large run is no long task of the page), until something newer supersedes it.
      const { model: imported, scenario } = built ?? (await buildRunInSlices(read, { signal: claim }));
      if (!session.show({ model: imported, scenario: scenario as Scenario | null, kind: "imported" }, { claim })) return;
      setMessage(`imported ${name}: ${imported.samples.length} samples${skipped ? ` (${skipped} ${skipped === 1 ? "line" : "lines"} with problems left out)` : ""}`);
    };

  /** Several files picked together are one run's (its steps), in their names' order (step 2 before step 10). */
  const importPicked = (files: File[]) => {
    setMessage(null);
    const claim = claimShow();
    const ordered = [...files].sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
    importFiles(ordered, { accept: acceptImport(claim), signal: claim }).catch((e: Error) => setMessage(`could not import ${ordered[0]!.name}: ${e.message}`));
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
          setKeptAs(restored, { state: "saved", id: run.id });
          if (!session.show({ model: restored, scenario: scenario as Scenario | null, kind: "saved" }, { claim })) return;
          if (skipped) setMessage(`opened ${name}: ${restored.samples.length} samples (${skipped} ${skipped === 1 ? "line" : "lines"} with problems left out)`);
        },
      });
    } catch (e) {
      if (!claim.aborted) setMessage(`could not open ${run.title}: ${(e as { reason?: string }).reason ?? (e as Error).message}`);
    }
  };

  const deleteSaved = (run: SavedRunSummary) =>
    deleteRun(run.id).then(
      () => setSaved((l) => l.filter((r) => r.id !== run.id)),
      (e: Error) => setMessage(`could not delete ${run.title}: ${(e as { reason?: string }).reason ?? e.message}`),
    );

  const copyLink = async () => {
    setShared(null);
    setMessage(null);
    // A link carries the run on screen (its scenario, with its seed); with no run shown, the set-up's scenario.
    const of = model ? "run" : "set-up";
    if (model && preview) return setMessage("A preview is no run yet: share it once it is imported.");
    if (model && !runScenario) {
      return setMessage("The run shown came without its scenario (a file exported without one): a link cannot carry it. Export it as JSONL to share it.");
    }
    let hash: string;
    try {
      hash = shareHash(runScenario ?? JSON.parse(scenarioText), true);
    } catch (e) {
      setMessage(e instanceof SyntaxError ? "the scenario is not valid JSON" : `the scenario cannot be put in a link: ${(e as Error).message}`);
      return;
    }
    const url = `${location.origin}${location.pathname}${hash}`;
    // No browser opens a link past its URL limit, and the apps links pass through cut them far shorter: such a link is
    // not offered (nor copied, nor put in the address bar); the files that carry a run are.
    if (url.length > MAX_SHARE_LINK_LENGTH) {
      setShared({ tooLong: url.length });
      return;
    }
    // This tab's address loads the scenario (a reload does not run it again); the copied link runs it.
    history.replaceState(null, "", url.replace(/&run=1$/, ""));
    try {
      if (!navigator.clipboard) throw new Error("this page has no clipboard access");
      await navigator.clipboard.writeText(url);
      setShared({ url, copied: true, of });
    } catch (e) {
      setShared({ url, copied: false, why: (e as Error).message, of });
    }
  };

  const downloadScenario = () => downloadBlob(new Blob([scenarioText], { type: "application/json" }), `scenario-${Date.now()}.json`);

  return (
    <section className="keep">
      <div className="row">
        <button className="secondary" onClick={() => void copyLink()}>
          Share link
        </button>
        <button className="secondary" onClick={download} disabled={!model || status === "running" || preview !== null} title={preview ? "A preview is no run yet: export it once it is imported" : undefined}>
          Export JSONL
        </button>
        <JsonlFileButton label="Import JSONL" ariaLabel="Import JSONL" onFiles={importPicked} />
      </div>
      {importPanel}
      {shared && "tooLong" in shared && (
        <div className="error" role="alert" data-testid="share-too-long">
          <p>
            This link would be {shared.tooLong.toLocaleString("en")} characters long, more than the{" "}
            {MAX_SHARE_LINK_LENGTH.toLocaleString("en")} a link can carry safely (browsers refuse or cut longer ones, and so do
            the apps links pass through): no link was made or copied. Share a file instead: the scenario as JSON
            {model ? ", or the run as JSONL (its last line holds the scenario)" : ""}.
          </p>
          <div className="row">
            <button className="secondary" onClick={downloadScenario}>
              Download the scenario (JSON)
            </button>
            {model && (
              <button className="secondary" onClick={download} disabled={status === "running" || preview !== null}>
                Export the run (JSONL)
              </button>
            )}
          </div>
        </div>
      )}
      {shared && "url" in shared && (
        <div className="hint" data-testid="share-message">
          <p>
            {shared.copied
              ? `Link to this ${shared.of} copied (opening it runs the same scenario with the same seed; a link that reaches other hosts asks first):`
              : `The link to this ${shared.of} could not be copied (${shared.why}); copy it from here (opening it runs the same scenario with the same seed):`}
          </p>
          <input className="share-link" aria-label="Share link" data-testid="share-link" readOnly value={shared.url} onFocus={(e) => e.target.select()} />
        </div>
      )}
      {message && <p className="hint" data-testid="keep-message">{message}</p>}
      {listProblem && (
        <p className="hint" data-testid="saved-runs-problem" role="alert">
          {listProblem}
        </p>
      )}
      {saved.length > 0 && (
        <details>
          <summary>Saved runs ({saved.length})</summary>
          <ul className="saved-runs" data-testid="saved-runs">
            {saved.map((run) => (
              <SavedRunItem key={run.id} run={run} onOpen={() => void openSaved(run)} onDelete={() => void deleteSaved(run)} onProblem={setMessage} />
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}

/** A saved run in the list: open it, rename it (its title is its name in the list), or delete it. */
function SavedRunItem(props: { run: SavedRunSummary; onOpen(): void; onDelete(): void; onProblem(message: string): void }) {
  const { run, onOpen, onDelete, onProblem } = props;
  const [editing, setEditing] = useState<string | null>(null);
  const rename = (title: string) => {
    setEditing(null);
    const name = title.trim();
    if (!name || name === run.title) return;
    renameRun(run.id, name).then(
      (renamed) => renamed || onProblem(`could not rename ${run.title}: it is no longer saved in this browser`),
      (e: Error) => onProblem(`could not rename ${run.title}: ${(e as { reason?: string }).reason ?? e.message}`),
    );
  };
  if (editing !== null) {
    return (
      <li>
        <form
          className="rename"
          onSubmit={(e) => {
            e.preventDefault();
            rename(editing);
          }}
        >
          <input aria-label={`New name for ${run.title}`} value={editing} autoFocus onChange={(e) => setEditing(e.target.value)} onKeyDown={(e) => e.key === "Escape" && setEditing(null)} />
          <button type="submit" className="secondary">
            Rename
          </button>
          <button type="button" className="link" onClick={() => setEditing(null)}>
            cancel
          </button>
        </form>
      </li>
    );
  }
  return (
    <li>
      <button className="link" onClick={onOpen}>
        {run.title}
      </button>{" "}
      {run.meanReward !== null && <span className="hint">mean reward {run.meanReward.toFixed(3)}</span>}{" "}
      <button className="link" aria-label={`Rename ${run.title}`} onClick={() => setEditing(run.title)}>
        rename
      </button>{" "}
      <button className="link" aria-label={`Delete ${run.title}`} onClick={onDelete}>
        delete
      </button>
    </li>
  );
}
