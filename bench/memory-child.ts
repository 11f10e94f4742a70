/**
 * One measurement of bench/memory.ts, in a process of its own (started with --expose-gc): the heap a run model holds
 * once a finished run is opened from its export, with the run model of the checkout at `<src root>` (this one, or
 * an earlier version's for a before/after). Prints one JSON line.
 *
 *   node --expose-gc --import tsx bench/memory-child.ts <src root> <fixture.jsonl>
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [srcRoot, fixture] = process.argv.slice(2);
if (!srcRoot || !fixture) throw new Error("usage: memory-child.ts <src root> <fixture.jsonl>");
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");

interface Msg {
  content: string;
  token_ids: ArrayLike<number>;
  generation_logprobs?: ArrayLike<number>;
}
interface Model {
  samples: { messages: Msg[]; turns: unknown[] }[];
}

const { importJsonl } = (await import(pathToFileURL(join(srcRoot, "src/app/run/jsonl.ts")).href)) as { importJsonl(text: string): { model: Model } };

const settle = () => {
  for (let i = 0; i < 4; i++) gc();
};
const used = () => {
  const m = process.memoryUsage();
  return { heap: m.heapUsed, arrayBuffers: m.arrayBuffers };
};

// Held throughout (it is in both readings, so it cancels out).
const text = readFileSync(fixture, "utf8");
// A first import warms up the code (compiled functions, the schema's closures), so what follows is the data.
importJsonl(text.slice(0, text.indexOf("\n") + 1));
settle();
const before = used();
const started = performance.now();
const { model } = importJsonl(text);
const importMs = performance.now() - started;
settle();
const after = used();

let messages = 0;
let tokens = 0;
let logprobs = 0;
let textBytes = 0;
const encoder = new TextEncoder();
for (const s of model.samples) {
  for (const m of s.messages) {
    messages += 1;
    tokens += m.token_ids.length;
    logprobs += m.generation_logprobs?.length ?? 0;
    textBytes += encoder.encode(m.content).length;
  }
}
const turns = model.samples.reduce((a, s) => a + s.turns.length, 0);
// Keeps the model alive until here (what was measured is what it holds).
const held = { heap: after.heap - before.heap, arrayBuffers: after.arrayBuffers - before.arrayBuffers };
console.log(
  JSON.stringify({
    src_root: srcRoot,
    samples: model.samples.length,
    turns,
    messages,
    token_ids: tokens,
    logprobs,
    text_bytes: textBytes,
    held_heap_bytes: held.heap,
    held_array_buffer_bytes: held.arrayBuffers,
    held_bytes: held.heap + held.arrayBuffers,
    import_ms: Math.round(importMs),
    file_chars: text.length,
  }),
);
