/** The policy benchmark in the browser: `?model=small&device=wasm`; the result lands in `window.benchResult`. */

import { runPolicyBenchmark } from "../src/policy/llm/benchmark.js";
import { loadBrowserModel, type DeviceRequest } from "../src/policy/llm/worker.js";

const params = new URLSearchParams(location.search);
const preset = params.get("model") ?? "small";
const device = (params.get("device") ?? "wasm") as DeviceRequest;
const out = document.getElementById("out")!;
const target = window as unknown as { benchResult?: unknown; benchError?: string };

try {
  const loaded = await loadBrowserModel({ model: `builtin:${preset}`, device, numThreads: Number(params.get("threads") ?? 1) });
  const result = await runPolicyBenchmark({
    ...loaded,
    backend: `chromium-${loaded.choice.device}`,
    modelName: `builtin:${preset}`,
    newTokens: Number(params.get("tokens") ?? 64),
    rounds: Number(params.get("rounds") ?? 5),
  });
  target.benchResult = result;
  out.textContent = JSON.stringify(result, null, 2);
} catch (e) {
  target.benchError = (e as Error).stack ?? String(e);
  out.textContent = target.benchError;
}
