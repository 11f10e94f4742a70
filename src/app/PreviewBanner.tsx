/**
 * Over the views while a big file is previewed (./run/preview-import.ts, `labPreview` in ./store.ts): that the run
 * shown is a preview of a file still being read (lines, percent, a Stop), and that nothing is imported until the
 * whole file is checked; then, for a file with problems, that the import panel asks what to do.
 */

import { useRun, useShown } from "./session/hooks.js";
import { useLab } from "./store.js";
import "./preview.css";

export function PreviewBanner() {
  const preview = useShown((s) => s.preview);
  const model = useShown((s) => (s.preview ? s.model : null));
  // The samples shown so far: the preview's model publishes as it grows.
  useRun(model);
  const progress = useLab((s) => s.previewProgress);
  const shown = model?.samples.length ?? 0;
  if (!preview) return null;
  const pct = progress.totalBytes ? Math.min(100, Math.floor((100 * progress.bytesRead) / progress.totalBytes)) : null;
  const samples = `${shown.toLocaleString("en")} ${shown === 1 ? "sample" : "samples"} shown`;
  if (preview.phase === "problems") {
    return (
      <div className="preview-banner" data-testid="preview-banner" data-phase="problems" role="status">
        <p>
          <strong>Preview</strong> of {preview.name} ({samples}): the whole file is read, and {preview.badLines.toLocaleString("en")}{" "}
          {preview.badLines === 1 ? "line has a problem" : "lines have problems"}. <span className="preview-note">Nothing is imported: the import
          panel lists the problems and asks whether to import the valid lines.</span>
        </p>
      </div>
    );
  }
  return (
    <div
      className="preview-banner"
      data-testid="preview-banner"
      data-phase="reading"
      data-samples={shown}
      data-bytes-read={progress.bytesRead}
      data-total-bytes={progress.totalBytes ?? ""}
      role="status"
    >
      <p>
        <strong>Preview</strong> of {preview.name}, still being read: {progress.linesRead.toLocaleString("en")} lines
        {pct !== null ? ` (${pct}%)` : ""}, {samples}.{" "}
        <span className="preview-note">Nothing is imported until the whole file is checked; until then the run is not saved, exported, forked or compared.</span>
      </p>
      <button className="secondary" data-testid="preview-stop" onClick={() => preview.stop()}>
        Stop
      </button>
    </div>
  );
}
