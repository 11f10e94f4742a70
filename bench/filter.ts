/**
 * `npm run bench:filter`: finding things in 100,000 samples (issue 19 item 5). A 100,000-sample verl dump (short
 * prompts and responses, a uid per group of 8) is read as the page reads an import (`JsonlAccumulator` with format
 * detection, then `buildRun`), and then, each the median of 5 rounds:
 *
 * - a filter expression (`compileFilter`) against the same condition written as a JavaScript closure over the same
 *   samples (the reference: the ratio is what the expression language costs);
 * - a text search (`text ~ "…"`) against a hand-written `includes` over the messages;
 * - sorting by a field (`compileValue` + `sortRows`) against sorting the numbers directly;
 * - the GRPO groups (`runGroups`), with no reference (absolute time).
 *
 * The targets are absolute (a filter or sort in under 200 ms); the absolute times are printed beside the ratios,
 * and the machine with them. Writes `bench/results/filter.json`.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildRun } from "../src/app/run/jsonl.js";
import { runGroups } from "../src/app/run/groups.js";
import type { SampleView } from "../src/app/run/run-model.js";
import { compileFilter, compileValue, sortRows } from "../src/app/run/sample-filter.js";
import { searchRun } from "../src/app/run/text-search.js";
import { JsonlAccumulator } from "../src/scenario/jsonl-reader.js";
import { root } from "./fixture.js";
import { machine } from "./machine.js";

const N = Number(process.argv[process.argv.indexOf("--samples") + 1]) || 100_000;
const ROUNDS = 5;

function median(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function time<T>(fn: () => T): { ms: number; value: T } {
  const times: number[] = [];
  let value!: T;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    value = fn();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), value };
}

// The dump, as verl's _dump_generations writes it: one line per sample.
const lines: string[] = [];
for (let i = 0; i < N; i++) {
  const a = i % 97;
  const ok = i % 3 === 0;
  lines.push(
    JSON.stringify({
      input: `system\nYou are a helpful assistant.\nuser\nWhat is ${a} + ${a}? Put the answer in \\boxed{}.\nassistant\n`,
      output: ok ? `${a} + ${a} = \\boxed{${2 * a}}.` : i % 1000 === 7 ? "Traceback (most recent call last): ValueError" : `I think \\boxed{${2 * a + 1}}.`,
      gts: String(2 * a),
      score: ok ? 1 : 0,
      step: 1,
      acc: ok,
      uid: `u${Math.floor(i / 8)}`,
    }),
  );
}
const text = `${lines.join("\n")}\n`;
const bytes = Buffer.byteLength(text);

const t0 = performance.now();
const acc = new JsonlAccumulator({ maxProblems: 5 });
acc.push(text);
const read = acc.end();
const readMs = performance.now() - t0;
const t1 = performance.now();
const { model } = buildRun(read);
const buildMs = performance.now() - t1;
if (model.samples.length !== N) throw new Error(`read ${model.samples.length} samples of ${N}`);
const samples: readonly SampleView[] = model.samples;
const batch = model.finalBatch;

const compiled = (expr: string) => {
  const c = compileFilter(expr, { batch });
  if ("error" in c) throw new Error(c.error.message);
  return c.test!;
};

const expression = time(() => samples.filter(compiled("reward < 0.5 and messages == 2 and imported.acc == false")).length);
const closure = time(
  () =>
    samples.filter((s) => s.totalReward < 0.5 && s.messages.length === 2 && (batch!.imported![s.sample] as { fields: { acc: boolean } }).fields.acc === false).length,
);
if (expression.value !== closure.value) throw new Error(`the filter kept ${expression.value}, the closure ${closure.value}`);

const search = time(() => samples.filter(compiled('text ~ "Traceback"')).length);
const includes = time(() => samples.filter((s) => s.messages.some((m) => m.content.toLowerCase().includes("traceback"))).length);
if (search.value !== includes.value) throw new Error(`the search found ${search.value}, includes ${includes.value}`);

// The search box's listing: every matching message counted, the first 200 kept (src/app/run/text-search.ts).
const listing = time(() => searchRun(samples, "Traceback", 200));
if (listing.value.samples !== includes.value) throw new Error(`the listing found ${listing.value.samples} samples, includes ${includes.value}`);

const all = samples.map((s) => s.sample);
const byReward = compileValue("reward", { batch });
if ("error" in byReward) throw new Error(byReward.error.message);
const sorted = time(() => sortRows(all, samples, byReward.get, true));
const plainSort = time(() => [...all].sort((a, b) => samples[b]!.totalReward - samples[a]!.totalReward || a - b));
if (sorted.value.join() !== plainSort.value.join()) throw new Error("the sort and the reference disagree");

const groups = time(() => runGroups(samples, batch));

const round = (x: number) => Math.round(x * 10) / 10;
const results = {
  benchmark: "filter",
  machine: machine(),
  samples: N,
  dump_mb: round(bytes / 2 ** 20),
  read: { ms: round(readMs), mb_per_s: round(bytes / 2 ** 20 / (readMs / 1000)) },
  build_run_ms: round(buildMs),
  filter: { expression_ms: round(expression.ms), closure_ms: round(closure.ms), ratio: round(expression.ms / closure.ms), kept: expression.value },
  text_search: { expression_ms: round(search.ms), includes_ms: round(includes.ms), ratio: round(search.ms / includes.ms), found: search.value },
  search_hits: { ms: round(listing.ms), hits: listing.value.total, samples: listing.value.samples, listed: listing.value.hits.length },
  sort: { expression_ms: round(sorted.ms), plain_sort_ms: round(plainSort.ms), ratio: round(sorted.ms / plainSort.ms) },
  groups: { ms: round(groups.ms), groups: groups.value.groups.length },
  target_ms: 200,
};
console.log(JSON.stringify(results, null, 2));
mkdirSync(join(root, "bench/results"), { recursive: true });
writeFileSync(join(root, "bench/results/filter.json"), `${JSON.stringify(results, null, 2)}\n`);
