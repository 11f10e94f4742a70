/**
 * `npm run bench:memory`: benchmark 5, the memory a finished run of 1,000 samples × 20 turns takes in the lab's run
 * model, against the raw size of its data. The run (bench/fixture.ts: the same file bench:page opens) is imported
 * from its JSONL export as the lab rebuilds a saved or imported run (`importJsonl` → `RunModel`), in a Node process
 * of its own started with --expose-gc; what the model holds is the heap (and the ArrayBuffers outside it) used after
 * garbage collection, less what was used before the import.
 *
 * The raw size of the data (`rawSize` in src/bench-support/page-fixture.ts): every message's token ids at 4 bytes
 * each, its log-probabilities at 4 bytes each, and its text as UTF-8 bytes; nothing else (no per-turn records, no
 * environment states), so the ratio also counts what the lab keeps beside the messages.
 *
 * `-- --baseline <checkout>` measures an earlier version of the lab the same way, side by side (a git worktree of an
 * earlier commit: `git worktree add /tmp/lab-before <commit>`; its node_modules may be a link to this one's).
 * Writes `bench/results/memory.json`. (The heap of the same run in the page, through CDP, is in bench:page's
 * results: `open.heap_run_mb`.)
 */

import { execFile } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { fixtureFile, root } from "./fixture.js";
import { machine } from "./machine.js";

const exec = promisify(execFile);
const argv = process.argv.slice(2);
const option = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const baseline = option("baseline");
const samples = Number(option("samples") ?? 1000);
const turns = Number(option("turns") ?? 20);
const runs = Number(option("runs") ?? 3);

interface Measured {
  src_root: string;
  samples: number;
  turns: number;
  messages: number;
  token_ids: number;
  logprobs: number;
  text_bytes: number;
  held_heap_bytes: number;
  held_array_buffer_bytes: number;
  held_bytes: number;
  import_ms: number;
}

async function measure(srcRoot: string, fixture: string): Promise<Measured> {
  if (!existsSync(join(srcRoot, "src/app/run/jsonl.ts"))) throw new Error(`${srcRoot} is no checkout of the lab (src/app/run/jsonl.ts is missing)`);
  const { stdout } = await exec(process.execPath, ["--expose-gc", "--import", "tsx", join(root, "bench/memory-child.ts"), srcRoot, fixture], {
    cwd: root,
    maxBuffer: 1 << 24,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as Measured;
}

const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

console.log(`fixture ${samples} × ${turns} (built once, under bench/results/fixtures/) …`);
const fixture = await fixtureFile({ samples, turns, seed: 1 });
const contenders: [string, string][] = [["this checkout", root], ...(baseline ? [["baseline", resolve(baseline)] as [string, string]] : [])];
const results: Record<string, Measured[]> = {};
for (let r = 0; r < runs; r++) {
  // Interleaved, so both see the same machine.
  for (const [name, srcRoot] of contenders) {
    console.log(`${name} (run ${r + 1}/${runs}) …`);
    (results[name] ??= []).push(await measure(srcRoot, fixture));
  }
}

const first = results["this checkout"]![0]!;
const raw = {
  token_id_bytes: first.token_ids * 4,
  logprob_bytes: first.logprobs * 4,
  text_bytes: first.text_bytes,
  total_bytes: first.token_ids * 4 + first.logprobs * 4 + first.text_bytes,
};
const per1000x20 = (bytes: number, m: Measured) => bytes * (1000 / m.samples) * (20 / (m.turns / m.samples));
const summary = Object.entries(results).map(([name, ms]) => {
  const held = median(ms.map((m) => m.held_bytes));
  const heap = median(ms.map((m) => m.held_heap_bytes));
  const buffers = median(ms.map((m) => m.held_array_buffer_bytes));
  return {
    contender: name,
    "held MB": mb(held),
    "of which JS heap MB": mb(heap),
    "of which ArrayBuffers MB": mb(buffers),
    "MB per 1,000 × 20": mb(per1000x20(held, ms[0]!)),
    "÷ raw": Math.round((held / raw.total_bytes) * 100) / 100,
    "import ms": median(ms.map((m) => m.import_ms)),
  };
});
console.log(
  `raw data: ${first.messages.toLocaleString("en")} messages, ${first.token_ids.toLocaleString("en")} token ids (${mb(raw.token_id_bytes)} MB at 4 B), ` +
    `${first.logprobs.toLocaleString("en")} log-probabilities (${mb(raw.logprob_bytes)} MB at 4 B), text ${mb(raw.text_bytes)} MB (UTF-8): ${mb(raw.total_bytes)} MB`,
);
console.table(summary);
mkdirSync(join(root, "bench/results"), { recursive: true });
const file = join(root, "bench/results/memory.json");
writeFileSync(
  file,
  `${JSON.stringify(
    {
      measured_at: new Date().toISOString(),
      machine: machine(),
      what: `a finished run of ${samples} samples × ${turns} turns opened from its JSONL export (importJsonl → RunModel), in Node after garbage collection`,
      raw_definition: "token ids × 4 B + log-probabilities × 4 B + message texts as UTF-8 bytes",
      raw,
      summary,
      results,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${file}`);
