/** The policy benchmark in Node (onnxruntime-node, CPU): prints its result as one JSON line. */

import { AutoModelForCausalLM, AutoTokenizer, BaseStreamer, env, LogitsProcessor, StoppingCriteria, Tensor } from "@huggingface/transformers";
import { writeBuiltinModel } from "../src/policy/builtin-model/write-folder.js";
import { runPolicyBenchmark } from "../src/policy/llm/benchmark.js";
import { DEFAULT_MODELS_ROOT } from "../src/policy/llm/node.js";

const preset = (process.argv[2] ?? "small") as "tiny" | "small";
writeBuiltinModel(DEFAULT_MODELS_ROOT, preset);
env.allowRemoteModels = false;
env.localModelPath = `${DEFAULT_MODELS_ROOT}/`;
const id = `builtin/${preset}`;
const tokenizer = await AutoTokenizer.from_pretrained(id);
const model = await AutoModelForCausalLM.from_pretrained(id, { device: "cpu", dtype: "fp32" });
const result = await runPolicyBenchmark({
  runtime: { Tensor, LogitsProcessor, StoppingCriteria, BaseStreamer },
  model,
  tokenizer,
  backend: "node-cpu",
  modelName: `builtin:${preset}`,
});
console.log(JSON.stringify(result));
