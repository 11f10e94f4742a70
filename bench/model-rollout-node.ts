/**
 * The model-rollout benchmark in Node (onnxruntime-node on the CPU, or with `webgpu` the decoder on onnxruntime-web's
 * WebGPU backend through Dawn): progress on stderr, the result as the last line of stdout. Arguments: a JSON object of
 * `ModelRolloutConfig` fields (bench/model-rollout.ts passes them), then the device (`cpu`, the default, or `webgpu`).
 */

import { runModelRolloutBenchmark, type ModelRolloutConfig } from "../src/bench-support/model-rollout.js";
import { loadNodeModel } from "../src/policy/llm/node.js";
import { collectGarbage } from "./machine.js";

const config = JSON.parse(process.argv[2] ?? "{}") as Partial<ModelRolloutConfig>;
const device = process.argv[3] === "webgpu" ? "webgpu" : "cpu";
const loaded = await loadNodeModel({ model: config.model ?? "builtin:small", device });
if (loaded.adapter) console.error(`WebGPU adapter: ${JSON.stringify(loaded.adapter)}`);
const result = await runModelRolloutBenchmark({
  loaded,
  backend: `node-${device}`,
  config,
  between: collectGarbage,
  log: (line) => console.error(line),
});
console.log(JSON.stringify({ ...result, ...(loaded.adapter ? { adapter: loaded.adapter } : {}) }));
