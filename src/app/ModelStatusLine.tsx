import { useShown } from "./session/hooks.js";

/** Which model, on which device and why, and the download progress while it loads. */
export function ModelStatusLine() {
  const status = useShown((s) => s.modelStatus);
  if (!status) return null;
  return (
    <p className="model-status" data-testid="model-status">
      Model <strong>{status.model}</strong>: {status.phase === "ready" ? `ready on ${status.device?.toUpperCase()}` : "loading"}
      {status.reason ? ` — ${status.reason}` : ""}
      {status.progress && status.phase === "loading" && (
        <>
          {" "}
          <progress data-testid="download-progress" max={1} value={status.progress.fraction} /> {status.progress.file}
        </>
      )}
      {status.model.startsWith("builtin:") && " · a pipeline model with random weights: its text is noise, its mechanics are real."}
    </p>
  );
}
