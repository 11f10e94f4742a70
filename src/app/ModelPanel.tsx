import { DTYPES } from "../policy/llm/model-source.js";
import { useLab } from "./store.js";

const DEVICES = ["auto", "wasm", "webgpu"] as const;

/**
 * Where a model policy comes from and how it runs: the built-in models, a hub id (with an optional hub address),
 * or a folder the user picks; the device (auto = WebGPU on a hardware adapter, else WASM) and the dtype.
 * Edits the scenario's `policy` block; the hub address and the picked files are lab settings sent beside it.
 */
export function ModelPanel() {
  const scenarioText = useLab((s) => s.form.scenarioText);
  const remoteHost = useLab((s) => s.form.remoteHost);
  const localFolder = useLab((s) => s.form.localFolder);
  const deviceLoss = useLab((s) => s.form.deviceLoss);
  const { setScenarioText, setRemoteHost, setLocalFolder, setDeviceLoss } = useLab.getState().form;
  let policy: Record<string, unknown> | null = null;
  try {
    const parsed = JSON.parse(scenarioText) as { policy?: Record<string, unknown> };
    if (parsed.policy?.kind === "model") policy = parsed.policy;
  } catch {
    // The editor holds text being typed; the panel waits for valid JSON.
  }
  const update = (changes: Record<string, unknown>) => {
    const parsed = JSON.parse(scenarioText) as { policy: Record<string, unknown> };
    const next = { ...parsed.policy, ...changes };
    for (const [k, v] of Object.entries(next)) if (v === "") delete next[k];
    setScenarioText(JSON.stringify({ ...parsed, policy: next }, null, 2));
  };
  if (!policy) return null;
  return (
    <fieldset className="model-panel">
      <legend>Model policy</legend>
      <label>
        Model{" "}
        <input
          aria-label="Model"
          value={String(policy.model ?? "")}
          onChange={(e) => update({ model: e.target.value })}
          placeholder="builtin:trained, builtin:tiny, builtin:small, builtin:tiny-qwen3 or org/name"
        />
      </label>
      <label>
        Device{" "}
        <select aria-label="Device" value={String(policy.device ?? "auto")} onChange={(e) => update({ device: e.target.value })}>
          {DEVICES.map((d) => (
            <option key={d}>{d}</option>
          ))}
        </select>
      </label>
      <label>
        dtype{" "}
        <select aria-label="dtype" value={String(policy.dtype ?? "fp32")} onChange={(e) => update({ dtype: e.target.value })}>
          {DTYPES.map((d) => (
            <option key={d}>{d}</option>
          ))}
        </select>
      </label>
      <label title="If the WebGPU device is lost mid-run: stop the run (what finished is kept), or load the model on WASM and go on from the turn under way">
        On device loss{" "}
        <select aria-label="On device loss" value={deviceLoss} onChange={(e) => setDeviceLoss(e.target.value === "wasm" ? "wasm" : "stop")}>
          <option value="stop">stop the run</option>
          <option value="wasm">fall back to WASM</option>
        </select>
      </label>
      <label>
        Hub address{" "}
        <input aria-label="Hub address" value={remoteHost} placeholder="https://huggingface.co/" onChange={(e) => setRemoteHost(e.target.value)} />
      </label>
      <label>
        Local folder{" "}
        <input
          aria-label="Local model folder"
          type="file"
          // Non-standard, but every current browser supports it for picking folders.
          webkitdirectory=""
          onChange={(e) => {
            const files = [...(e.target.files ?? [])];
            if (!files.length) return;
            const name = files[0]!.webkitRelativePath.split("/")[0]!;
            // Paths relative to the picked folder, as transformers.js asks for them.
            setLocalFolder(name, files.map((file) => ({ path: file.webkitRelativePath.split("/").slice(1).join("/"), file })));
            update({ model: `local:${name}` });
          }}
        />
      </label>
      {localFolder && <span className="hint">picked {localFolder.name} ({localFolder.files.length} files)</span>}
    </fieldset>
  );
}
