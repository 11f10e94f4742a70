/**
 * `npm run bench:engine` (part of `npm run bench`): benchmark 1, engine overhead (src/bench-support/engine.ts). The
 * oracle policy on the sliding puzzle, 1,024 samples × 30 turns, through the real sync and async rollouts and through
 * a bare loop doing the same oracle calls, environment steps and tokenization, interleaved over rounds. Prints a
 * table and writes `bench/results/engine.json`. `-- --samples N --rounds R` for other sizes.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runEngineBenchmark } from "../src/bench-support/engine.js";
import { collectGarbage, machine } from "./machine.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { samples: { type: "string" }, rounds: { type: "string" } } });

const result = await runEngineBenchmark({
  config: values.samples ? { samples: Number(values.samples) } : {},
  rounds: values.rounds ? Number(values.rounds) : 3,
  between: collectGarbage,
  log: (line) => console.log(line),
});

const c = result.config;
console.log(
  `\n${c.samples} samples × up to ${c.turns} turns (${c.side}×${c.side} boards, ${c.shuffleMoves} shuffle moves, oracle error rate ${c.errorRate}): ` +
    `${result.sample_turns} sample-turns, ${result.mean_turns_per_sample} turns per sample on average, ` +
    `${Math.round(result.share_running_at_last_turn * 100)}% still running at the last turn; endings ${JSON.stringify(result.terminations)}`,
);
console.table(
  Object.fromEntries(
    Object.entries(result.ms).map(([contender, ms]) => [
      contender,
      { "median ms": ms, "÷ bare": Math.round((ms / result.ms.bare!) * 1000) / 1000, ...result.counts[contender as keyof typeof result.counts] },
    ]),
  ),
);
console.log(`bare + rows (the generation interface's rows alone) / bare loop: ${result.rows_over_bare}`);
if (result.sample_steps_over_bare !== undefined) {
  console.log(`bare, sample steps (one step call per sample, as async makes them) / bare loop: ${result.sample_steps_over_bare}`);
}
for (const [path, ratio] of [
  ["sync", result.sync_over_bare],
  ["async (against the bare loop with batched steps)", result.async_over_bare],
  ["async (against the bare loop with the same per-sample steps)", result.async_over_bare_sample_steps],
] as const) {
  if (ratio === undefined) continue;
  console.log(
    ratio <= result.target
      ? `${path}: rollout / bare loop ${ratio} meets ≤ ${result.target}`
      : `${path}: rollout / bare loop ${ratio} misses ≤ ${result.target} by ${Math.round((ratio - result.target) * 1000) / 1000} (${Math.round((ratio / result.target - 1) * 100)}% over)`,
  );
}
mkdirSync(join(root, "bench/results"), { recursive: true });
const file = join(root, "bench/results/engine.json");
writeFileSync(file, `${JSON.stringify({ measured_at: new Date().toISOString(), machine: machine(), result }, null, 2)}\n`);
console.log(`wrote ${file}`);
