/**
 * The model-rollout benchmark in Node (onnxruntime-node, CPU): progress on stderr, the result as the last line of
 * stdout. Arguments: a JSON object of `ModelRolloutConfig` fields (bench/model-rollout.ts passes them).
 */

import { runModelRolloutBenchmark, type ModelRolloutConfig } from "../src/bench-support/model-rollout.js";
import { loadNodeModel } from "../src/policy/llm/node.js";
import { collectGarbage } from "./machine.js";

const config = JSON.parse(process.argv[2] ?? "{}") as Partial<ModelRolloutConfig>;
const loaded = await loadNodeModel({ model: config.model ?? "builtin:small" });
const result = await runModelRolloutBenchmark({
  loaded,
  backend: "node-cpu",
  config,
  between: collectGarbage,
  log: (line) => console.error(line),
});
console.log(JSON.stringify(result));
