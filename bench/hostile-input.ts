/**
 * `npm run bench:hostile-input`: how long the parsers that read outside text take on hostile input, and whether it
 * grows linearly. The fault suite's fuzz tests (src/faults/fuzz.test.ts) check that they survive it; timing is this
 * benchmark's, never a test's (a test that asserted milliseconds would fail on a loaded machine).
 *
 * For each parser, each hostile input (src/bench-support/hostile-text.ts: a protocol fragment repeated, deep nesting,
 * thousands of bad fields) at two sizes, 10× apart, against a reference of the same length measured in the same run
 * (an ordinary reply, flat JSON, valid sample lines): `vs_reference` (hostile ÷ reference at the larger size) and
 * `growth` (the larger size's time ÷ the smaller's: ~10 when linear, ~100 when quadratic; above 30 is flagged
 * `superlinear`). Each time is per call, the median of 5 rounds of enough calls to take ~20 ms. Writes `bench/results/hostile-input.json`.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectMalformedThinking } from "../src/core/assessment/invalid-action.js";
import { parseHermesToolCalls } from "../src/core/protocol/hermes.js";
import { validateArguments } from "../src/core/protocol/schema.js";
import { ordinaryReply, repeatedFragments } from "../src/bench-support/hostile-text.js";
import { readJsonl } from "../src/scenario/jsonl-reader.js";
import { parseScenarioText } from "../src/scenario/schema.js";
import { root } from "./fixture.js";
import { machine } from "./machine.js";

const ROUNDS = 5;
const SUPERLINEAR = 30;

/** Per call: the median of 5 rounds, each of enough calls (after one to warm up) to take ~20 ms, so a fast parser's time is not timer noise. */
async function perCallMs(run: () => unknown): Promise<number> {
  let t0 = performance.now();
  await run();
  const once = performance.now() - t0;
  const calls = Math.min(10_000, Math.max(1, Math.ceil(20 / Math.max(once, 0.002))));
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    t0 = performance.now();
    for (let k = 0; k < calls; k++) await run();
    times.push((performance.now() - t0) / calls);
  }
  return times.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
}

interface Case {
  parser: string;
  input: string;
  /** The hostile input and its reference at a scale (1 or 10). */
  hostile: (scale: number) => () => unknown;
  reference: (scale: number) => () => unknown;
}

const TOOLS_SCHEMA = {
  type: "object",
  required: ["list", "missing"],
  properties: { list: { type: "array", items: { type: "object", properties: { x: { type: "string" }, y: { type: "array", items: { enum: [1, "s"] } } } } } },
};
const listOf = (n: number, item: (i: number) => unknown) => ({ list: Array.from({ length: n }, (_, i) => item(i)) });

const sampleLine = (i: number) => JSON.stringify({ idx: i, task_name: "t", message_log: [{ role: "user", content: "What is 2 + 2?" }, { role: "assistant", content: "4" }] });
/** Valid sample lines making up `bytes` characters: what reading that much of an ordinary file costs. */
const validLines = (bytes: number) => {
  const lines: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) size += (lines[lines.length] = sampleLine(i)).length + 1;
  return lines.join("\n");
};
const flatJson = (length: number) => `[${"1,".repeat(Math.max(0, Math.floor(length / 2) - 1))}1]`;

const cases: Case[] = [];
for (const fragment of repeatedFragments(1)) {
  const text = (scale: number) => fragment.repeat(5000 * scale);
  const label = JSON.stringify(fragment.slice(0, 24));
  cases.push({ parser: "parseHermesToolCalls", input: `${label} × 5000`, hostile: (s) => { const t = text(s); return () => parseHermesToolCalls(t); }, reference: (s) => { const t = ordinaryReply(text(s).length); return () => parseHermesToolCalls(t); } });
  cases.push({ parser: "detectMalformedThinking", input: `${label} × 5000`, hostile: (s) => { const t = text(s); return () => detectMalformedThinking(t, ["<think>", "</think>"], "paired"); }, reference: (s) => { const t = ordinaryReply(text(s).length); return () => detectMalformedThinking(t, ["<think>", "</think>"], "paired"); } });
}
const deepTexts: [string, (n: number) => string][] = [
  ['"[" × 20,000', (n) => "[".repeat(n)],
  ["[…] nested 10,000 deep", (n) => `${"[".repeat(n / 2)}${"]".repeat(n / 2)}`],
  ['{"a": × 4,000', (n) => '{"a":'.repeat(n / 5)],
  ['\'"\' × 20,001', (n) => '"'.repeat(n + 1)],
];
for (const [input, make] of deepTexts) {
  const swallow = (t: string) => () => {
    try {
      parseScenarioText(t);
    } catch {
      // A ScenarioError is the answer here; its time is what is measured.
    }
  };
  cases.push({ parser: "parseScenarioText", input, hostile: (s) => swallow(make(20_000 * s)), reference: (s) => { const t = flatJson(make(20_000 * s).length); return () => JSON.parse(t); } });
}
cases.push({
  parser: "validateArguments",
  input: "2,000 items, 2 errors each",
  hostile: (s) => { const v = listOf(2000 * s, (i) => ({ x: i, y: [i, "s"] })); return () => validateArguments(v, TOOLS_SCHEMA); },
  reference: (s) => { const v = listOf(2000 * s, (i) => ({ x: String(i), y: [1, "s"] })); return () => validateArguments(v, TOOLS_SCHEMA); },
});
const badFields = (n: number) => `{"idx":0,"task_name":"t","message_log":[${Array.from({ length: n }, () => '{"role":"user","content":1}').join(",")}]}`;
const jsonlCases: [string, (s: number) => string][] = [
  ["a line nested 50,000 deep", (s) => `{"idx":0,"task_name":"t","message_log":[],"x":${"[".repeat(50_000 * s)}${"]".repeat(50_000 * s)}}`],
  ["a line of 5,000 bad fields", (s) => badFields(5000 * s)],
  ['"<tool_call>{" × 5000 as a line', (s) => "<tool_call>{".repeat(5000 * s)],
];
for (const [input, make] of jsonlCases) {
  cases.push({
    parser: "readJsonl",
    input,
    hostile: (s) => { const l = make(s); return () => readJsonl(new Blob([`${l}\n${l}`])); },
    reference: (s) => { const t = validLines(2 * make(s).length); return () => readJsonl(new Blob([t])); },
  });
}

const round = (x: number) => Number(x.toPrecision(3));
const rows = [];
for (const c of cases) {
  const small = await perCallMs(c.hostile(1));
  const large = await perCallMs(c.hostile(10));
  const reference = await perCallMs(c.reference(10));
  const growth = large / small;
  rows.push({ parser: c.parser, input: c.input, ms: round(small), ms_10x: round(large), reference_ms_10x: round(reference), vs_reference: round(large / reference), growth: round(growth), superlinear: growth > SUPERLINEAR });
  console.log(`${c.parser.padEnd(24)} ${c.input.padEnd(36)} ${round(small)} ms → ×10: ${round(large)} ms (growth ${round(growth)}; ordinary input ${round(reference)} ms, ${round(large / reference)}×)`);
}
const results = {
  benchmark: "hostile-input",
  measured_at: new Date().toISOString(),
  machine: machine(),
  rounds: ROUNDS,
  superlinear_above: SUPERLINEAR,
  superlinear: rows.filter((r) => r.superlinear).map((r) => `${r.parser}: ${r.input}`),
  rows,
};
console.log(results.superlinear.length ? `superlinear: ${results.superlinear.join("; ")}` : "every parser grew linearly (growth ≤ 30 at 10× the input)");
mkdirSync(join(root, "bench/results"), { recursive: true });
writeFileSync(join(root, "bench/results/hostile-input.json"), `${JSON.stringify(results, null, 2)}\n`);
