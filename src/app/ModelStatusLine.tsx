import { BUILTIN_MODEL_LABELS, isBuiltinModelName } from "../policy/builtin-model/presets.js";
import { useShown } from "./session/hooks.js";

/** What a built-in model is (trained, or random weights), for the line after its name; null for other models. */
function builtinAbout(model: string): string | null {
  const name = model.startsWith("builtin:") ? model.slice("builtin:".length) : "";
  return isBuiltinModelName(name) ? BUILTIN_MODEL_LABELS[name].about : null;
}

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
      {builtinAbout(status.model) !== null && ` · ${builtinAbout(status.model)}`}
    </p>
  );
}
