/** What the Node commands share: running a scenario file headless, and their usage errors. */

import { LabError } from "../core/index.js";
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { getHeapStatistics } from "node:v8";
import { loadNodeModelPolicy } from "../policy/llm/node.js";
import { webGpuAdapterInUse } from "../policy/llm/node-webgpu.js";
import { loadPolicyTokenizer } from "../policy/llm/tokenizer-load.js";
import { tokenizerVocabSize } from "../policy/llm/vocab-size.js";
import { ServerPolicy } from "../policy/server/index.js";
import type { LoadedPolicy, RunScenarioOptions, SampleLimit } from "../scenario/run.js";
import { decodeUtf8 } from "../scenario/utf8.js";
import { checkoutEnvironmentLookup } from "./checkout-environments.js";
import { hubEndpoint } from "./hub-endpoint.js";

/**
 * Options for `runScenario` on a scenario file in Node: files it names (a replay's run) and a model policy's local
 * folder are relative to the scenario file; models run on onnxruntime-node; the environments are the built-in
 * ones and the modules of `--environments <dir>` (default: this checkout's `environments/*.js`), loaded once.
 */
export async function nodeRunOptions(
  scenarioPath: string,
): Promise<Pick<RunScenarioOptions, "loadFile" | "modelPolicy" | "serverPolicy" | "environments" | "sampleLimit" | "textTokenizer">> {
  const dir = dirname(resolve(scenarioPath));
  // A local folder (a model's, a tokenizer's) is relative to the scenario file.
  const local = (spec: string) => (spec.startsWith("./") || spec.startsWith("../") ? resolve(dir, spec) : spec);
  return {
    sampleLimit: nodeSampleLimit(),
    environments: await checkoutEnvironmentLookup(),
    // Read as bytes: bytes that are not UTF-8 are an error naming the byte, not U+FFFD.
    loadFile: async (file) => decodeUtf8(await readFile(resolve(dir, file))),
    modelPolicy: async (spec) => {
      const policy = await loadNodeModelPolicy({ ...spec, model: local(spec.model), ...hubEndpoint() });
      const adapter = spec.device === "webgpu" ? webGpuAdapterInUse() : null;
      if (adapter?.software) {
        process.stderr.write(`warning: the WebGPU adapter is a software one (${adapter.description}): correct, but far slower than a GPU or the CPU\n`);
      }
      return { generation: policy, tokenizer: policy.tokenizer, dispose: () => policy.dispose(), metrics: () => policy.metrics() };
    },
    serverPolicy: (spec) => nodeServerPolicy(spec, local),
    // A scenario's `tokenizer` for the text policies: a local folder is relative to the scenario, as a model's is.
    textTokenizer: (spec) => loadPolicyTokenizer(local(spec), hubEndpoint()),
  };
}

type ServerSpec = Parameters<NonNullable<RunScenarioOptions["serverPolicy"]>>[0];

/**
 * A server policy in Node: its tokenizer (`tokenizer`, else `model`: a hub id's files from the hub, a folder, the
 * byte-level one for `builtin:tiny`/`builtin:small`) and the API key from the environment variable `api_key_env` names.
 */
export async function nodeServerPolicy(spec: ServerSpec, local: (spec: string) => string = (s) => s, env: NodeJS.ProcessEnv = process.env): Promise<LoadedPolicy> {
  let apiKey: string | undefined;
  if (spec.api_key_env !== undefined) {
    apiKey = env[spec.api_key_env];
    if (!apiKey) throw new Error(`policy.api_key_env: the environment variable ${spec.api_key_env} is not set (it should hold the server's API key)`);
  }
  const name = spec.tokenizer ?? spec.model;
  let tokenizer;
  try {
    tokenizer = await loadPolicyTokenizer(local(name), hubEndpoint());
  } catch (e) {
    throw new Error(`policy.${spec.tokenizer === undefined ? "model" : "tokenizer"}: the server policy's tokenizer: ${(e as Error).message}`);
  }
  const policy = new ServerPolicy(spec, { tokenizer, vocabSize: tokenizerVocabSize(tokenizer), ...(apiKey ? { apiKey } : {}) });
  return { generation: policy, tokenizer, metrics: () => policy.metrics() };
}

/**
 * The heap a sample takes at the least, for the bound below: 64 KiB, about twice what a finished sample of the
 * heaviest built-in environment keeps (the workspace with its files, ~33 KiB; the calculator and the puzzle ~14 KiB),
 * leaving room for what a run holds while it runs. A floor, not an estimate of every run: long episodes or a model's
 * long outputs take more, and can still run out of memory below the bound.
 */
export const HEAP_BYTES_PER_SAMPLE = 64 * 1024;

/**
 * The most samples this process can hold: its heap limit (`v8.getHeapStatistics().heap_size_limit`, which
 * `--max-old-space-size` sets) over `HEAP_BYTES_PER_SAMPLE`. A dataset above it would end in V8's heap abort (a crash
 * with no result), so it is refused before anything is generated (4 GiB of heap: 65,536 samples).
 */
export function nodeSampleLimit(heapSizeLimit = getHeapStatistics().heap_size_limit): SampleLimit {
  const max = Math.floor(heapSizeLimit / HEAP_BYTES_PER_SAMPLE);
  const mib = Math.round(heapSizeLimit / 2 ** 20);
  return {
    max,
    why:
      `at most ${max} fit in its ${mib} MiB heap (${HEAP_BYTES_PER_SAMPLE / 1024} KiB a sample at the least); give Node more ` +
      "(NODE_OPTIONS=--max-old-space-size=<MiB>) or split the dataset into several runs",
  };
}

/** Bad command-line usage: `detail` says what was wrong (null: the user asked for help). */
export class UsageError extends LabError {
  override name = "UsageError";
  override readonly code = "usage";
  constructor(
    readonly detail: string | null,
    usage: string,
  ) {
    super(detail ?? usage);
  }
}
