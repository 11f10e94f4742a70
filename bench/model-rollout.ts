/**
 * `npm run bench:model-rollout` (part of `npm run bench`): benchmark 8, a multi-turn model rollout
 * (src/bench-support/model-rollout.ts): the model policy on its decode engine against transformers.js `generate()`,
 * 16 samples × 8 turns of the sliding puzzle on builtin:small, sync and async, in Node (onnxruntime-node) and in
 * headless Chromium on WASM; prefilled ÷ new context tokens; async ÷ sync with no latency and with 0–50 ms steps;
 * decode tokens per second at batch 32 against batch 1. Prints a table and writes `bench/results/model-rollout.json`.
 *
 * Options: `-- --model builtin:small --samples N --turns T --rounds R --only node,chromium --device wasm|webgpu --sampled --out <file>`,
 * `--parts ab,jitter,decode` (new against old; async against sync with 0–50 ms steps; decode at each batch size),
 * `--modes sync,async` (part ab's paths), `--engines continuous,generate` (part ab's policies: one alone to look at
 * it without the other in the same runtime), `--decode-batches 1,32 --decode-prompt-tokens 512 --decode-new-tokens 64`;
 * `--append` keeps the results already in the file (another backend's, measured at another time or size).
 * `--device webgpu` runs on WebGPU, for a machine with a GPU: Node through Dawn (`node-webgpu.ts`; a GPU server
 * without a browser needs only this) and the page in Chromium with `--enable-unsafe-webgpu`.
 */

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { ModelRolloutConfig, ModelRolloutResult } from "../src/bench-support/model-rollout.js";
import { machine } from "./machine.js";

const here = dirname(fileURLToPath(import.meta.url));
// Bundled by bench/device/pack.sh (for a GPU machine without tsx or node_modules), this file runs from
// .devpack/bench/node/ with its Node side bundled beside it, and the repository is the working directory.
const bundled = import.meta.url.endsWith(".mjs");
const root = bundled ? process.cwd() : join(here, "..");
const { values } = parseArgs({
  options: {
    model: { type: "string" },
    samples: { type: "string" },
    turns: { type: "string" },
    rounds: { type: "string" },
    only: { type: "string" },
    device: { type: "string" },
    sampled: { type: "boolean" },
    parts: { type: "string" },
    modes: { type: "string" },
    engines: { type: "string" },
    "decode-batches": { type: "string" },
    "decode-prompt-tokens": { type: "string" },
    "decode-new-tokens": { type: "string" },
    out: { type: "string" },
    append: { type: "boolean" },
  },
});
const config: Partial<ModelRolloutConfig> = {
  ...(values.model ? { model: values.model } : {}),
  ...(values.samples ? { samples: Number(values.samples) } : {}),
  ...(values.turns ? { turns: Number(values.turns) } : {}),
  ...(values.rounds ? { rounds: Number(values.rounds) } : {}),
  ...(values.sampled ? { sampledRound: true } : {}),
  ...(values.parts ? { parts: values.parts.split(",") as ModelRolloutConfig["parts"] } : {}),
  ...(values.modes ? { modes: values.modes.split(",") as ModelRolloutConfig["modes"] } : {}),
  ...(values.engines ? { engines: values.engines.split(",") as ModelRolloutConfig["engines"] } : {}),
  ...(values["decode-batches"] ? { decodeBatches: values["decode-batches"].split(",").map(Number) } : {}),
  ...(values["decode-prompt-tokens"] ? { decodePromptTokens: Number(values["decode-prompt-tokens"]) } : {}),
  ...(values["decode-new-tokens"] ? { decodeNewTokens: Number(values["decode-new-tokens"]) } : {}),
};
const only = new Set((values.only ?? "node,chromium").split(","));
const device = values.device === "webgpu" ? "webgpu" : "wasm";

async function inNode(): Promise<ModelRolloutResult> {
  const nodeDevice = device === "webgpu" ? "webgpu" : "cpu";
  const entry = bundled ? [join(here, "model-rollout-node.mjs")] : ["--import", "tsx", "bench/model-rollout-node.ts"];
  const child = spawn(process.execPath, ["--expose-gc", ...entry, JSON.stringify(config), nodeDevice], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.on("close", done));
  if (code !== 0) throw new Error(`the Node benchmark exited with ${code}`);
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as ModelRolloutResult;
}

async function inChromium(): Promise<ModelRolloutResult> {
  // Loaded only here: a GPU machine without a browser runs the Node side alone (bench/device/pack.sh).
  const { runDevPage } = await import("./dev-page.js");
  return runDevPage<ModelRolloutResult>({
    path: `/bench/model-rollout.html?device=${device}&config=${encodeURIComponent(JSON.stringify(config))}`,
    port: 4791,
    device,
    timeoutMs: 60 * 60_000,
    echoLog: true,
  });
}

const started = performance.now();
const results: ModelRolloutResult[] = [];
if (only.has("node")) results.push(await inNode());
if (only.has("chromium")) results.push(await inChromium());

const show = (x: number | null | undefined) => (x === null || x === undefined ? "–" : x);
const mismatched = (r: ModelRolloutResult, mode: string, variant = "none") => {
  const c = r.token_comparisons.filter((x) => x.mode === mode && x.variant === variant);
  return c.length ? c.map((x) => `${x.mismatches.length}/${r.config.samples}`).join(", ") : "–";
};
console.log();
const rolledOut = results.filter((r) => r.runs.length > 0);
if (rolledOut.length) {
  console.table(
    Object.fromEntries(
      rolledOut.flatMap((r) =>
        (["sync", "async"] as const).map((mode) => [
          `${r.backend} ${mode}`,
          {
            "new tok/s": show(r.tokens_per_s[`continuous_${mode}`]),
            "old tok/s": show(r.tokens_per_s[`generate_${mode}`]),
            "new/old (≥3)": show(r.speedup[mode]),
            "prefilled/new ctx (≤1.05)": show(r.prefill_ratio[mode]),
            "old prefilled/new ctx": show(r.old_prefill_ratio[mode]),
            "samples differing new vs old": mismatched(r, mode),
            "jitter wall ms": show(r.jitter_wall_ms[mode]),
          },
        ]),
      ),
    ),
  );
}
const decoded = results.filter((r) => r.decode_runs.length > 0);
if (decoded.length) {
  console.table(
    Object.fromEntries(
      decoded.map((r) => [
        r.backend,
        {
          ...Object.fromEntries(Object.entries(r.decode_tokens_per_s).map(([batch, tps]) => [`decode tok/s, batch ${batch}`, tps])),
          [`batch ${Math.max(...r.config.decodeBatches)} / batch 1`]: show(r.decode_batch_speedup),
        },
      ]),
    ),
  );
}
for (const r of results) {
  const atLeast = (value: number | null | undefined, target: number, what: string) =>
    value === null || value === undefined ? `${what}: not measured` : `${what} ${value} ${value >= target ? "meets" : "misses"} ≥ ${target}`;
  const atMost = (value: number | null | undefined, target: number, what: string) =>
    value === null || value === undefined ? `${what}: not measured` : `${what} ${value} ${value <= target ? "meets" : "misses"} ≤ ${target}`;
  console.log(
    `${r.backend}: ` +
      [
        atLeast(r.speedup.sync, r.targets.speedup, "sync new/old"),
        atLeast(r.speedup.async, r.targets.speedup, "async new/old"),
        atMost(Math.max(r.prefill_ratio.sync ?? 0, r.prefill_ratio.async ?? 0) || null, r.targets.prefill_ratio, "prefilled/new context"),
        atLeast(r.async_over_sync_tokens_per_s, r.targets.async_over_sync_tokens_per_s, "async/sync tok/s"),
        atMost(r.jitter_async_over_sync_wall, r.targets.jitter_async_over_sync_wall, "async/sync wall with 0–50 ms steps"),
      ].join("; "),
  );
  if (r.sync_async_mismatches?.length) console.log(`${r.backend}: ${r.sync_async_mismatches.length} samples differ between sync and async (new policy)`);
  const sampled = r.token_comparisons.find((c) => c.variant === "sampled");
  if (sampled) console.log(`${r.backend}: seeded sampling, sync: ${sampled.mismatches.length}/${r.config.samples} samples differ between new and old`);
}
type WithAdapter = ModelRolloutResult & { adapter?: { description: string; software: boolean } };
const onWebGpu = (results as WithAdapter[]).filter((r) => r.backend.endsWith("webgpu"));
const webgpu = onWebGpu.length
  ? `measured: ${onWebGpu.map((r) => `${r.backend}${r.adapter ? ` on ${r.adapter.description || "an unnamed adapter"}${r.adapter.software ? " (a software adapter: correct, not a GPU's speed)" : ""}` : ""}`).join(", ")}`
  : "not measured: no GPU on this machine (`-- --device webgpu` runs Node through Dawn and the page on WebGPU)";
console.log(`WebGPU: ${webgpu}`);
const file = resolve(root, values.out ?? "bench/results/model-rollout.json");
mkdirSync(dirname(file), { recursive: true });
const adapters = [...new Set((results as WithAdapter[]).flatMap((r) => (r.adapter ? [r.adapter.description] : [])))];
const run = { measured_at: new Date().toISOString(), machine: machine(adapters.join(", ") || undefined), took_s: Math.round((performance.now() - started) / 1000), config, results };
const earlier = values.append && existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { runs?: unknown[] }).runs ?? [] : [];
writeFileSync(file, `${JSON.stringify({ webgpu, runs: [...earlier, run] }, null, 2)}\n`);
console.log(`wrote ${file}`);
