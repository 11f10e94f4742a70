/** The policy benchmark in Node (onnxruntime-node, CPU): prints its result as one JSON line. */

import { runPolicyBenchmark } from "../src/policy/llm/benchmark.js";
import { loadNodeModel } from "../src/policy/llm/node.js";

const preset = process.argv[2] === "tiny" ? "tiny" : "small";
const loaded = await loadNodeModel({ model: `builtin:${preset}` });
const result = await runPolicyBenchmark({ ...loaded, backend: "node-cpu", modelName: `builtin:${preset}` });
console.log(JSON.stringify(result));
