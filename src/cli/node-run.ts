/** What the Node commands share: running a scenario file headless, and their usage errors. */

import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { loadNodeModelPolicy } from "../policy/llm/node.js";
import type { RunScenarioOptions } from "../scenario/run.js";
import { decodeUtf8 } from "../scenario/utf8.js";
import { checkoutEnvironmentLookup } from "./checkout-environments.js";

/**
 * Options for `runScenario` on a scenario file in Node: files it names (a replay's run) and a model policy's local
 * folder are relative to the scenario file; models run on onnxruntime-node; the environments are the built-in
 * ones and the modules of `--environments <dir>` (default: this checkout's `environments/*.js`), loaded once.
 */
export async function nodeRunOptions(scenarioPath: string): Promise<Pick<RunScenarioOptions, "loadFile" | "modelPolicy" | "environments">> {
  const dir = dirname(resolve(scenarioPath));
  return {
    environments: await checkoutEnvironmentLookup(),
    // Read as bytes: bytes that are not UTF-8 are an error naming the byte, not U+FFFD.
    loadFile: async (file) => decodeUtf8(await readFile(resolve(dir, file))),
    modelPolicy: async (spec) => {
      const model = spec.model.startsWith("./") || spec.model.startsWith("../") ? resolve(dir, spec.model) : spec.model;
      const policy = await loadNodeModelPolicy({ ...spec, model });
      return { generation: policy, tokenizer: policy.tokenizer, dispose: () => policy.dispose() };
    },
  };
}

/** Bad command-line usage: `detail` says what was wrong (null: the user asked for help). */
export class UsageError extends Error {
  constructor(
    readonly detail: string | null,
    usage: string,
  ) {
    super(detail ?? usage);
  }
}
