/**
 * `npm run bench:async-sync` (part of `npm run bench`): benchmark 2, async against sync when environment latency
 * varies (src/bench-support/async-sync.ts). 256 samples × 30 turns, each sample's step taking a seeded 0–50 ms, a
 * batched step as long as its slowest sample; each path's wall time against its ideal from the recorded latencies.
 * Prints a table and writes `bench/results/async-sync.json`. `-- --samples N --rounds R` for other sizes.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runAsyncSyncBenchmark } from "../src/bench-support/async-sync.js";
import { collectGarbage, machine } from "./machine.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { samples: { type: "string" }, rounds: { type: "string" } } });

const result = await runAsyncSyncBenchmark({
  config: values.samples ? { samples: Number(values.samples) } : {},
  rounds: values.rounds ? Number(values.rounds) : 3,
  between: collectGarbage,
  log: (line) => console.log(line),
});

const c = result.config;
console.log(`\n${c.samples} samples × ${c.turns} turns, 0–${c.maxLatencyMs} ms per sample step: ${result.sample_turns} sample-turns, ${result.step_calls.sync} sync step calls, ${result.step_calls.async} async`);
console.table({
  sync: { "ideal ms": result.ideal_ms.sync, "wall ms": result.wall_ms.sync, "wall / ideal (≤1.1)": result.sync_over_ideal, "no-latency ms": result.no_latency_ms.sync },
  async: { "ideal ms": result.ideal_ms.async, "wall ms": result.wall_ms.async, "wall / ideal (≤1.1)": result.async_over_ideal, "no-latency ms": result.no_latency_ms.async },
});
for (const [path, ratio] of [["sync", result.sync_over_ideal], ["async", result.async_over_ideal]] as const) {
  console.log(
    ratio <= result.target
      ? `${path}: wall / ideal ${ratio} meets ≤ ${result.target}`
      : `${path}: wall / ideal ${ratio} misses ≤ ${result.target} by ${Math.round((ratio - result.target) * 1000) / 1000} (${Math.round((ratio / result.target - 1) * 100)}% over)`,
  );
}
console.log(`async / sync: ${result.async_over_sync} (ideal ${result.ideal_async_over_sync})`);
mkdirSync(join(root, "bench/results"), { recursive: true });
const file = join(root, "bench/results/async-sync.json");
writeFileSync(file, `${JSON.stringify({ measured_at: new Date().toISOString(), machine: machine(), result }, null, 2)}\n`);
console.log(`wrote ${file}`);
