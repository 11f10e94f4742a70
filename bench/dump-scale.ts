/**
 * `npm run bench:dump-scale`: a big foreign dump opened in the page (issue 19, item 5, "Scale"). Writes a NeMo RL
 * `train_data_step{N}.jsonl` (as `log_batched_dict_as_jsonl` writes it: every field a one-sample slice; multi-turn
 * `content`, `token_ids`, `token_loss_mask`, `sample_loss_mask`, `input_lengths`, `generation_logprobs`,
 * `prev_logprobs`, `advantages`, `rewards`) of 100,000 samples, about 1 GB, streamed to a temp dir; then a dump a
 * tenth of its size (the reference: the same samples' shape, the same page, the same run) and opens each through the
 * page's "Import JSONL" in headless Chromium (a path: the file is never held in Node). Measured in the page:
 *
 *   - the first sample row on screen (target: < 1 s from the pick), and the whole file read, checked and imported;
 *   - a filter (`reward < 0.5` typed into the filter box) and a sort (by reward) over all the samples, until the
 *     count / the first row shows the answer, a frame later (target: < 200 ms);
 *   - the page's JS heap (CDP `Runtime.getHeapUsage` after GC) and the renderer process's resident memory (its peak
 *     while reading, from /proc), each against the file's size.
 *
 * The tenth-size dump gives the ratios (full ÷ tenth: ideally 10 for the whole read and memory, 1 for the first
 * row). `DUMP_SAMPLES` (default 100000) and `DUMP_MB` (default 1000) size the big dump; `E2E_DIST` serves a build
 * already made (else `vite build` into a temp dir); `BENCH_PORT` (default 4393). Writes bench/results/dump-scale.json.
 */

import { spawnSync } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type CDPSession, type Page } from "@playwright/test";
import { root } from "./fixture.js";
import { machine } from "./machine.js";
import { startPreview, waitForServer } from "./preview-server.js";

const SAMPLES = Number(process.env.DUMP_SAMPLES || 100_000);
const TARGET_MB = Number(process.env.DUMP_MB || 1000);
const port = Number(process.env.BENCH_PORT || 4393);
const round = (x: number, digits = 0) => Math.round(x * 10 ** digits) / 10 ** digits;

// ---------------------------------------------------------------------------------------------------------------
// The dump, streamed.

/** A seeded generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = "the move left right up down tile board solved step think answer tool call result error value check next state".split(" ");

/**
 * One sample's line. `tokens`: about how many tokens its sequence has (so the line's size follows the target); a
 * prompt, then assistant and environment turns (the loss mask's runs line up with `content`, as NeMo RL's do).
 */
function sampleLine(i: number, tokens: number, r: () => number): string {
  const turns = 2 + Math.floor(r() * 3); // assistant turns
  const parts: number[] = [];
  // token counts per message: prompt, then (assistant, environment)* with the last assistant's turn closing it
  const messages = 1 + turns * 2 - 1;
  const weights = Array.from({ length: messages }, () => 0.5 + r());
  const sum = weights.reduce((a, b) => a + b, 0);
  for (const w of weights) parts.push(Math.max(2, Math.round((w / sum) * tokens)));
  const content: string[] = [];
  const ids: number[] = [];
  const mask: number[] = [];
  const gen: string[] = [];
  const prev: string[] = [];
  const adv: string[] = [];
  const reward = i === 0 ? 0 : round(r(), 4);
  const advantage = (reward - 0.5).toFixed(4);
  parts.forEach((n, m) => {
    const trained = m % 2 === 1;
    const words: string[] = [];
    for (let t = 0; t < n; t++) {
      ids.push(Math.floor(r() * 151_000));
      mask.push(trained ? 1 : 0);
      if (trained) {
        const lp = -r() * 2;
        gen.push(lp.toFixed(6));
        prev.push((lp + (r() - 0.5) * 0.01).toFixed(6));
      } else {
        gen.push("0.0");
        prev.push("0.0");
      }
      adv.push(trained ? advantage : "0.0");
      if (t % 2 === 0) words.push(WORDS[Math.floor(r() * WORDS.length)]!);
    }
    const text = m === 0 ? `Solve the puzzle (sample ${i}): ${words.join(" ")}` : trained ? `<think>${words.join(" ")}</think><tool_call>{"name": "move", "arguments": {"d": "${words[0]}"}}</tool_call>` : `<tool_response>${words.join(" ")}</tool_response>`;
    content.push(text);
  });
  const n = ids.length;
  return (
    `{"content": [${JSON.stringify(content)}], "rewards": [${reward}], "filtered_rewards": [${reward}], "input_lengths": [${n}], ` +
    `"token_ids": [[${ids.join(", ")}]], "token_loss_mask": [[${mask.join(", ")}]], "sample_loss_mask": [1.0], ` +
    `"advantages": [[${adv.join(", ")}]], "generation_logprobs": [[${gen.join(", ")}]], "prev_logprobs": [[${prev.join(", ")}]], "idx": ${i}}\n`
  );
}

/** Writes `samples` lines of about `mb` MB in all to `file`, a chunk at a time (never the whole file in memory). */
async function writeDump(file: string, samples: number, mb: number): Promise<number> {
  // A token costs about 36 bytes over its six per-token fields: size the sequences to the target.
  const perSample = (mb * 1e6) / samples;
  const tokens = Math.max(8, Math.round((perSample - 700) / 36));
  const out = createWriteStream(file);
  const r = rng(7);
  let chunk = "";
  for (let i = 0; i < samples; i++) {
    chunk += sampleLine(i, Math.round(tokens * (0.6 + r() * 0.8)), r);
    if (chunk.length > 1 << 22) {
      if (!out.write(chunk)) await new Promise<void>((res) => out.once("drain", () => res()));
      chunk = "";
    }
  }
  out.write(chunk);
  await new Promise<void>((res, rej) => out.end((e?: Error | null) => (e ? rej(e) : res())));
  return statSync(file).size;
}

// ---------------------------------------------------------------------------------------------------------------
// The server, the browser.

function buildDist(): string {
  if (process.env.E2E_DIST) return process.env.E2E_DIST;
  const out = mkdtempSync(join(tmpdir(), "dump-scale-dist-"));
  console.log(`vite build → ${out} …`);
  const r = spawnSync(process.execPath, [join(root, "node_modules/vite/bin/vite.js"), "build", "--outDir", out, "--emptyOutDir"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) throw new Error("vite build failed");
  return out;
}


/** The resident memory (kB → bytes) of the browser's renderer processes, the largest (one page is open at a time). */
function rendererRss(browserPid: number | undefined): number {
  let best = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (!cmd.includes("--type=renderer") || cmd.includes("--extension-process")) continue;
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      if (browserPid !== undefined && !descendsFrom(Number(name), browserPid)) continue;
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      best = Math.max(best, kb * 1024);
    } catch {
      // gone
    }
  }
  return best;
}

function descendsFrom(pid: number, ancestor: number): boolean {
  for (let p = pid, i = 0; p > 1 && i < 20; i++) {
    if (p === ancestor) return true;
    try {
      p = Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      return false;
    }
  }
  return false;
}

async function heapUsed(cdp: CDPSession): Promise<{ heap: number; buffers: number }> {
  await cdp.send("HeapProfiler.collectGarbage");
  await cdp.send("HeapProfiler.collectGarbage");
  const { usedSize, backingStorageSize } = (await cdp.send("Runtime.getHeapUsage")) as { usedSize: number; backingStorageSize?: number };
  return { heap: usedSize, buffers: backingStorageSize ?? 0 };
}

// ---------------------------------------------------------------------------------------------------------------
// One open.

interface OpenMarks {
  change: number;
  first_row?: number;
  imported?: number;
  failed?: string;
}

/** In the page: marks from the file input's change to the first sample row, and to the import's message. */
function armOpen(): void {
  const w = window as unknown as { __open: Promise<OpenMarks> };
  const input = document.querySelector<HTMLInputElement>('input[aria-label="Import JSONL"]')!;
  w.__open = new Promise((resolve) => {
    input.addEventListener(
      "change",
      () => {
        const marks: OpenMarks = { change: performance.now() };
        const check = () => {
          if (marks.first_row === undefined && document.querySelector('[data-testid="sample-row"]')) {
            marks.first_row = performance.now();
            // painted: a frame later
            requestAnimationFrame(() => setTimeout(() => (marks.first_row = performance.now()), 0));
          }
          const message = document.querySelector('[data-testid="keep-message"]')?.textContent ?? "";
          const problems = document.querySelector('[data-testid="import-problems"]');
          if (message.startsWith("could not") || message.startsWith("stopped") || problems) {
            marks.failed = message || (problems?.textContent ?? "").slice(0, 300);
            observer.disconnect();
            resolve(marks);
          } else if (message.startsWith("imported")) {
            marks.imported = performance.now();
            observer.disconnect();
            setTimeout(() => resolve(marks), 50);
          }
        };
        const observer = new MutationObserver(check);
        observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
      },
      { once: true, capture: true },
    );
  });
}

/** In the page: sets the filter box's text as typing would, until its count says the answer (a frame later). */
async function timeFilter(text: string): Promise<{ ms: number; count: string }> {
  const input = document.querySelector<HTMLInputElement>('[data-testid="sample-filter"]')!;
  const frame = () => new Promise<void>((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!;
  const t0 = performance.now();
  setter.call(input, text);
  input.dispatchEvent(new Event("input", { bubbles: true }));
  for (;;) {
    const count = document.querySelector('[data-testid="sample-filter-count"]')?.textContent ?? "";
    if (count.includes("shown")) {
      await frame();
      return { ms: performance.now() - t0, count: count.trim() };
    }
    await new Promise((r) => setTimeout(r, 0));
  }
}

/** In the page: picks "by reward" in the sort box, until the first row is another sample (a frame later). */
async function timeSort(field: string): Promise<{ ms: number; first_before: string | null; first_after: string | null }> {
  const select = document.querySelector<HTMLSelectElement>('[data-testid="sample-sort"]')!;
  const frame = () => new Promise<void>((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const first = () => document.querySelector('[data-testid="sample-row"]')?.getAttribute("data-sample") ?? null;
  const before = first();
  const t0 = performance.now();
  select.value = field;
  select.dispatchEvent(new Event("change", { bubbles: true }));
  const deadline = t0 + 30_000;
  while (first() === before && performance.now() < deadline) await new Promise((r) => setTimeout(r, 0));
  await frame();
  return { ms: performance.now() - t0, first_before: before, first_after: first() };
}

interface OpenResult {
  file: string;
  samples: number;
  file_mb: number;
  first_row_ms: number;
  whole_file_ms: number;
  read_mb_per_s: number;
  filter_ms: number;
  filter_count: string;
  sort_ms: number;
  sort_first_row: string | null;
  heap_mb: number;
  array_buffers_mb: number;
  renderer_rss_before_mb: number;
  renderer_rss_peak_mb: number;
  renderer_rss_after_mb: number;
  /** What the open added: the page's memory (JS heap + ArrayBuffers, after GC) ÷ the file's size; the renderer's peak RSS over its RSS before ÷ the size. */
  heap_per_file: number;
  rss_peak_per_file: number;
  long_tasks_over_50ms: number;
  longest_task_ms: number;
}

async function openDump(browser: Browser, file: string, samples: number): Promise<OpenResult> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.addInitScript({ content: "globalThis.__name = (f) => f;" });
  await context.addInitScript(() => {
    const w = window as unknown as { __long: { start: number; duration: number }[] };
    w.__long = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__long.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: "longtask", buffered: true });
  });
  const page: Page = await context.newPage();
  page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
  const cdp = await context.newCDPSession(page);
  try {
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.getByRole("button", { name: "Run" }).first().waitFor();
    const before = await heapUsed(cdp);
    await page.evaluate(armOpen);
    const browserPid = (browser as unknown as { process?: () => { pid?: number } }).process?.()?.pid;
    const rssBefore = rendererRss(browserPid);
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, rendererRss(browserPid))), 250);
    await page.getByLabel("Import JSONL").setInputFiles(file);
    const marks = (await page.evaluate(() => (window as unknown as { __open: Promise<OpenMarks> }).__open)) as OpenMarks;
    clearInterval(sampler);
    peak = Math.max(peak, rendererRss(browserPid));
    if (marks.failed) throw new Error(`the import did not end clean: ${marks.failed}`);
    const lt = await page.evaluate(
      (w) => (window as unknown as { __long: { start: number; duration: number }[] }).__long.filter((t) => t.start + t.duration > w.start && t.start < w.end),
      { start: marks.change, end: marks.imported! },
    );
    // Let the saving of the imported run (in the background) settle before timing the filter.
    await page.waitForTimeout(3000);
    const filter = await page.evaluate(timeFilter, "reward < 0.5");
    const sort = await page.evaluate(timeSort, "reward");
    const after = await heapUsed(cdp);
    const rssAfter = rendererRss(browserPid);
    const size = statSync(file).size;
    const heapRun = after.heap + after.buffers - (before.heap + before.buffers);
    const whole = marks.imported! - marks.change;
    return {
      file,
      samples,
      file_mb: round(size / 1e6, 1),
      first_row_ms: Math.round(marks.first_row! - marks.change),
      whole_file_ms: Math.round(whole),
      read_mb_per_s: round(size / 1e6 / (whole / 1000), 1),
      filter_ms: Math.round(filter.ms),
      filter_count: filter.count,
      sort_ms: Math.round(sort.ms),
      sort_first_row: sort.first_after,
      heap_mb: round(after.heap / 1e6, 1),
      array_buffers_mb: round(after.buffers / 1e6, 1),
      renderer_rss_before_mb: round(rssBefore / 1e6, 1),
      renderer_rss_peak_mb: round(peak / 1e6, 1),
      renderer_rss_after_mb: round(rssAfter / 1e6, 1),
      heap_per_file: round(heapRun / size, 2),
      rss_peak_per_file: round((peak - rssBefore) / size, 2),
      long_tasks_over_50ms: lt.filter((t) => t.duration > 50).length,
      longest_task_ms: Math.round(Math.max(0, ...lt.map((t) => t.duration))),
    };
  } finally {
    await context.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "dump-scale-"));
  const tenthSamples = Math.max(1, Math.round(SAMPLES / 10));
  const big = join(dir, "big", "train_data_step1.jsonl");
  const small = join(dir, "small", "train_data_step1.jsonl");
  mkdirSync(join(dir, "big"));
  mkdirSync(join(dir, "small"));
  let t = performance.now();
  const bigSize = await writeDump(big, SAMPLES, TARGET_MB);
  console.log(`wrote ${SAMPLES} samples, ${round(bigSize / 1e6)} MB in ${round((performance.now() - t) / 1000, 1)} s → ${big}`);
  t = performance.now();
  const smallSize = await writeDump(small, tenthSamples, TARGET_MB / 10);
  console.log(`wrote ${tenthSamples} samples, ${round(smallSize / 1e6)} MB (the reference) in ${round((performance.now() - t) / 1000, 1)} s`);
  const dist = buildDist();
  if (!existsSync(join(dist, "index.html"))) throw new Error(`no build at ${dist}`);
  const server = startPreview(dist, port);
  const results: { tenth?: OpenResult; full?: OpenResult } = {};
  try {
    await waitForServer(`http://127.0.0.1:${port}/`);
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync", "--enable-precise-memory-info"],
    });
    try {
      console.log("open the tenth-size dump (the reference) …");
      results.tenth = await openDump(browser, small, tenthSamples);
      console.log(results.tenth);
      console.log("open the full dump …");
      results.full = await openDump(browser, big, SAMPLES);
      console.log(results.full);
    } finally {
      await browser.close();
    }
  } finally {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
    if (!process.env.E2E_DIST) rmSync(dist, { recursive: true, force: true });
  }
  const { full, tenth } = results as Required<typeof results>;
  const ratio = (a: number, b: number) => (b > 0 ? round(a / b, 2) : null);
  const rows = [
    { figure: `first sample row on screen, ${full.samples} samples / ${full.file_mb} MB`, target: "< 1,000 ms", measured: `${full.first_row_ms} ms (÷ the tenth-size dump: ${ratio(full.first_row_ms, tenth.first_row_ms)})`, verdict: full.first_row_ms < 1000 ? "met" : "missed" },
    { figure: "whole file read, checked and imported", target: "(reported)", measured: `${full.whole_file_ms} ms, ${full.read_mb_per_s} MB/s (÷ tenth: ${ratio(full.whole_file_ms, tenth.whole_file_ms)}, 10 is linear)`, verdict: "-" },
    { figure: `filter "reward < 0.5" over ${full.samples}`, target: "< 200 ms", measured: `${full.filter_ms} ms (${full.filter_count}; ÷ tenth: ${ratio(full.filter_ms, tenth.filter_ms)})`, verdict: full.filter_ms < 200 ? "met" : "missed" },
    { figure: `sort by reward over the filtered rows`, target: "< 200 ms", measured: `${full.sort_ms} ms (÷ tenth: ${ratio(full.sort_ms, tenth.sort_ms)})`, verdict: full.sort_ms < 200 ? "met" : "missed" },
    { figure: "page memory (JS heap + ArrayBuffers, after GC) ÷ file size", target: "(reported)", measured: `${full.heap_per_file} (${full.heap_mb} + ${full.array_buffers_mb} MB; tenth: ${tenth.heap_per_file})`, verdict: "-" },
    { figure: "renderer peak RSS (over its RSS before the pick) ÷ file size", target: "(reported)", measured: `${full.rss_peak_per_file} (${full.renderer_rss_before_mb} → ${full.renderer_rss_peak_mb} MB; tenth: ${tenth.rss_peak_per_file})`, verdict: "-" },
    { figure: "long tasks while reading", target: "(reported)", measured: `${full.long_tasks_over_50ms} over 50 ms, longest ${full.longest_task_ms} ms`, verdict: "-" },
  ];
  console.table(rows);
  mkdirSync(join(root, "bench/results"), { recursive: true });
  const file = join(root, "bench/results/dump-scale.json");
  writeFileSync(file, `${JSON.stringify({ measured_at: new Date().toISOString(), machine: machine(), browser: "Chromium (headless, /usr/bin/chromium)", served: dist, size: { samples: SAMPLES, target_mb: TARGET_MB }, summary: rows, results }, null, 2)}\n`);
  console.log(`wrote ${file}`);
}

await main();
