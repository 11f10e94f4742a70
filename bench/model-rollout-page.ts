/**
 * The model-rollout benchmark in the browser: `?device=wasm|webgpu&config=<JSON of ModelRolloutConfig fields>`
 * (`threads=N` for WASM threads, 1 by default). Progress goes to the console; the result lands in
 * `window.benchResult` (or the error in `window.benchError`).
 */

import { runModelRolloutBenchmark, type ModelRolloutConfig } from "../src/bench-support/model-rollout.js";
import { loadBrowserModel, type DeviceRequest } from "../src/policy/llm/worker.js";

const params = new URLSearchParams(location.search);
const device = (params.get("device") ?? "wasm") as DeviceRequest;
const config = JSON.parse(params.get("config") ?? "{}") as Partial<ModelRolloutConfig>;
const out = document.getElementById("out")!;
const target = window as unknown as { benchResult?: unknown; benchError?: string };

try {
  const loaded = await loadBrowserModel({ model: config.model ?? "builtin:small", device, numThreads: Number(params.get("threads") ?? 1) });
  const result = await runModelRolloutBenchmark({
    loaded,
    backend: `chromium-${loaded.choice.device}`,
    config,
    log: (line) => {
      console.log(line);
      out.textContent += `\n${line}`;
    },
  });
  target.benchResult = result;
  out.textContent = JSON.stringify(result, null, 2);
} catch (e) {
  target.benchError = (e as Error).stack ?? String(e);
  out.textContent = target.benchError;
}
