/**
 * `npm run bench:policy`: the policy benchmark (src/policy/llm/benchmark.ts) on the built-in `small` model, in Node
 * (onnxruntime-node, CPU) and in headless Chromium on WASM, each measured side by side with a bare transformers.js
 * `generate` loop in one run. Prints a table and writes `bench/results/policy.json`.
 */

import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { PolicyBenchmarkResult } from "../src/policy/llm/benchmark.js";
import { runDevPage } from "./dev-page.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const preset = process.argv[2] ?? "small";
const exec = promisify(execFile);

async function inNode(): Promise<PolicyBenchmarkResult> {
  const { stdout } = await exec("npx", ["tsx", "bench/policy-node.ts", preset], { cwd: root, maxBuffer: 1 << 24 });
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as PolicyBenchmarkResult;
}

function inChromium(device: "wasm" | "webgpu"): Promise<PolicyBenchmarkResult> {
  return runDevPage<PolicyBenchmarkResult>({ path: `/bench/policy.html?model=${preset}&device=${device}`, port: 4790, device, timeoutMs: 20 * 60_000 });
}

const results = [await inNode(), await inChromium("wasm")];
const rows = results.map((r) => ({
  backend: r.backend,
  model: r.model,
  "bare tok/s": r.bare_tokens_per_s,
  "ours tok/s": r.policy_tokens_per_s,
  "ours/bare (≥0.95)": r.throughput_ratio,
  "8 singles / batch of 8 (≥3 on WASM)": r.batching_speedup,
  "decode steps only": r.decode_batching_speedup,
  "TTFT ms": r.time_to_first_token_ms,
}));
console.table(rows);
for (const r of results) {
  const verdict = (value: number, target: number, what: string) =>
    value >= target ? `${what} ${value} meets ≥${target}` : `${what} ${value} is short of ≥${target} by ${Math.round((target - value) * 100) / 100}`;
  console.log(`${r.backend}: ${verdict(r.throughput_ratio, 0.95, "throughput ratio")}` +
    (r.backend.endsWith("wasm") ? `; ${verdict(r.batching_speedup, 3, "batching speed-up")}` : ""));
}
mkdirSync(join(root, "bench/results"), { recursive: true });
const file = join(root, "bench/results/policy.json");
writeFileSync(file, `${JSON.stringify({ measured_at: new Date().toISOString(), machine: "2-core CPU VM, no GPU", results }, null, 2)}\n`);
console.log(`wrote ${file}`);
