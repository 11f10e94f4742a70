/**
 * `npm run bench:page`: benchmark 4, the page at scale, in headless Chromium through Playwright, measured with the
 * Performance API in the page (a `longtask` PerformanceObserver, `performance.now()` marks, `long-animation-frame`
 * entries for what ran in a long frame) and the heap through CDP. Needs the built lab (`npm run build`); serves
 * `dist/` with `vite preview`. Absolute figures (there is no reference to compare with), written to
 * `bench/results/page.json`:
 *
 *   a. open: a finished run of 1,000 samples × 20 turns (bench/fixture.ts, the lab's JSONL export) imported through
 *      the page's "Import JSONL" → time until the batch overview shows it, and until a click on a sample shows that
 *      sample's transcript (target: < 1 s); the long tasks on the way;
 *   b. live: a run of 1,000 samples × 20 turns in the page (the oracle on 4×4 sliding puzzles) → the rate of rollout
 *      events reaching the page, the longest main-thread task and the count over 50 ms (target: none);
 *      live200: the same at the target's own rate, about 200 events/s for about 18 s: a user environment module whose
 *      step waits (bench/paced_env.js, loaded through the lab's "Load a module file" into its own Worker) and a
 *      scripted policy, 4 samples × 20 turns;
 *   c. scroll: the batch overview of (a) scrolled from top to bottom a wheel step per frame, then by jumps; a 200-turn
 *      transcript (4 samples × 200 turns, imported) scrolled the same way → long tasks (target: none over 50 ms).
 *
 * `-- --only open,live,live200,scroll` runs some of them (`scroll200`: only the 200-turn transcript's part of c;
 * results under `live_200_sync`/`live_200_async`); `-- --trace` also records a Chrome performance trace of each
 * (bench/results/traces/page-<name>.json, for DevTools' Performance panel) and names the longest tasks' work;
 * `-- --runs N` repeats each N times (the report keeps every run and the median); `-- --dist <dir>` serves another
 * build of the lab (`npx vite build --outDir <dir>`), e.g. of an earlier version; `-- --out <file>` writes the
 * results there instead.
 */

import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser, type CDPSession, type Page } from "@playwright/test";
import { fixtureFile, root } from "./fixture.js";
import { machine } from "./machine.js";
import { startPreview, waitForServer } from "./preview-server.js";

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(`--${name}`);
const option = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const only = new Set((option("only") ?? "open,live,live200,scroll").split(","));
const runs = Number(option("runs") ?? 1);
const tracing = flag("trace");
const port = Number(process.env.BENCH_PORT || 4791);
// `-- --dist <dir>`: another build of the lab (a build of an earlier version, to compare).
const dist = option("dist") ?? join(root, "dist");
const LONG_TASK_MS = 50;

if (!existsSync(join(dist, "index.html"))) {
  console.error(`bench:page needs the built lab: run \`npm run build\` first (${join(dist, "index.html")} is missing).`);
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------------------------
// In the page: long tasks, long animation frames, rollout events reaching the page (counted on the worker's
// messages, without touching the lab's code).

interface PageProbe {
  longtasks: { start: number; duration: number }[];
  frames: { start: number; duration: number; blocking: number; scripts: { invoker: string; source: string; duration: number }[] }[];
  events: number;
  /** Worker messages that carried them (one per event, or one per batch). */
  messages: number;
  firstEvent: number | null;
  lastEvent: number | null;
}

function installProbe(): void {
  const probe: PageProbe = { longtasks: [], frames: [], events: 0, messages: 0, firstEvent: null, lastEvent: null };
  (window as unknown as { __probe: PageProbe }).__probe = probe;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) probe.longtasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: "longtask", buffered: true });
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries() as unknown as {
        startTime: number;
        duration: number;
        blockingDuration: number;
        scripts: { invoker: string; sourceURL: string; sourceFunctionName: string; duration: number }[];
      }[]) {
        probe.frames.push({
          start: e.startTime,
          duration: e.duration,
          blocking: e.blockingDuration,
          scripts: e.scripts
            .filter((s) => s.duration >= 10)
            .map((s) => ({ invoker: s.invoker, source: `${s.sourceFunctionName || "?"} ${s.sourceURL.split("/").pop()}`, duration: Math.round(s.duration) })),
        });
      }
    }).observe({ type: "long-animation-frame", buffered: true });
  } catch {
    // an older Chromium without long-animation-frame entries: the long tasks are enough
  }
  const Base = window.Worker;
  window.Worker = class extends Base {
    constructor(url: string | URL, options?: WorkerOptions) {
      super(url, options);
      this.addEventListener("message", (e: MessageEvent) => {
        const data = e.data as { type?: string; events?: unknown[] } | null;
        if (data?.type !== "event" && data?.type !== "events") return;
        const t = performance.now();
        probe.messages += 1;
        probe.events += data.type === "events" ? (data.events?.length ?? 0) : 1;
        probe.firstEvent ??= t;
        probe.lastEvent = t;
      });
    }
  };
}

interface Window_ {
  start: number;
  end: number;
}

interface LongTaskSummary {
  count_over_50ms: number;
  longest_ms: number | null;
  total_over_50ms_ms: number;
  /** The long tasks themselves (start relative to the window's start). */
  tasks: { at_ms: number; ms: number }[];
  /** What ran in the long animation frames of the window (scripts of 10 ms or more). */
  frames: { at_ms: number; ms: number; blocking_ms: number; scripts: { invoker: string; source: string; duration: number }[] }[];
}

async function longTasksIn(page: Page, w: Window_): Promise<LongTaskSummary> {
  const probe = await page.evaluate(() => (window as unknown as { __probe: PageProbe }).__probe);
  const inside = (e: { start: number; duration: number }) => e.start + e.duration > w.start && e.start < w.end;
  const tasks = probe.longtasks.filter(inside);
  const longest = tasks.length ? Math.max(...tasks.map((t) => t.duration)) : null;
  return {
    count_over_50ms: tasks.filter((t) => t.duration > LONG_TASK_MS).length,
    longest_ms: longest === null ? null : Math.round(longest),
    total_over_50ms_ms: Math.round(tasks.reduce((a, t) => a + t.duration, 0)),
    tasks: tasks.map((t) => ({ at_ms: Math.round(t.start - w.start), ms: Math.round(t.duration) })),
    frames: probe.frames
      .filter(inside)
      .map((f) => ({ at_ms: Math.round(f.start - w.start), ms: Math.round(f.duration), blocking_ms: Math.round(f.blocking), scripts: f.scripts })),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The server, the browser, the trace.

async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync", "--enable-precise-memory-info"],
  });
}

async function newPage(browser: Browser): Promise<{ page: Page; cdp: CDPSession }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  // tsx (esbuild) names functions with a `__name` helper that functions sent to the page would miss.
  await context.addInitScript({ content: "globalThis.__name = (f) => f;" });
  await context.addInitScript(installProbe);
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
  const cdp = await context.newCDPSession(page);
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.getByRole("button", { name: "Run" }).first().waitFor();
  return { page, cdp };
}

/** The main thread's tasks in a trace, longest first, with the work each spent most of its time in. */
interface TraceTask {
  ms: number;
  top: { name: string; ms: number }[];
}

async function withTrace<T>(cdp: CDPSession, name: string, body: () => Promise<T>): Promise<{ result: T; longest: TraceTask[] | null }> {
  if (!tracing) return { result: await body(), longest: null };
  // A live run's whole trace would hold millions of events (a task per worker message): its first seconds only.
  const traceLimitMs = /^live-(sync|async)$/.test(name) ? 8000 : Infinity;
  const chunks: unknown[] = [];
  cdp.on("Tracing.dataCollected", (e: { value: unknown[] }) => void chunks.push(...e.value));
  const done = new Promise<void>((resolve) => cdp.once("Tracing.tracingComplete", () => resolve()));
  await cdp.send("Tracing.start", {
    transferMode: "ReportEvents",
    traceConfig: {
      includedCategories: ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute", "blink.user_timing"],
    },
  });
  let ended: Promise<void> | null = null;
  const endTrace = () => (ended ??= cdp.send("Tracing.end").then(() => done));
  const timer = Number.isFinite(traceLimitMs) ? setTimeout(endTrace, traceLimitMs) : null;
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  const result = await body();
  const { profile } = (await cdp.send("Profiler.stop")) as { profile: CpuProfile };
  if (timer) clearTimeout(timer);
  await endTrace();
  const dir = join(root, "bench/results/traces");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `page-${name}.json`), JSON.stringify({ traceEvents: chunks }));
  writeFileSync(join(dir, `page-${name}.cpuprofile`), JSON.stringify(profile));
  const hot = hotFunctions(profile);
  console.log(`  ${name}: main-thread functions by total (inclusive) ms, then by self ms:`);
  console.log(hot.total.map((f) => `    ${f.ms.toFixed(0).padStart(6)}  ${f.name}`).join("\n"));
  console.log(hot.self.map((f) => `    ${f.ms.toFixed(0).padStart(6)}  ${f.name}`).join("\n"));
  const longest = longestTasks(chunks as TraceEvent[]);
  console.log(`  ${name}: longest main-thread tasks in the trace${Number.isFinite(traceLimitMs) ? ` (its first ${traceLimitMs / 1000} s)` : ""}:`);
  for (const t of longest) console.log(`    ${t.ms} ms: ${t.top.map((x) => `${x.name} ${x.ms}`).join(", ")}`);
  return { result, longest };
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** The page's hottest functions in a CPU profile: by time inclusive of what they call, and by self time. */
function hotFunctions(profile: CpuProfile): { total: { name: string; ms: number }[]; self: { name: string; ms: number }[] } {
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (id: number) => {
    const f = byId.get(id)!.callFrame;
    return `${f.functionName || "(anonymous)"} ${f.url.split("/").pop() ?? ""}:${f.lineNumber + 1}`;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const name = label(id);
    self.set(name, (self.get(name) ?? 0) + dt);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const l = label(at);
      if (seen.has(l)) continue;
      seen.add(l);
      total.set(l, (total.get(l) ?? 0) + dt);
    }
  });
  const top = (m: Map<string, number>, n: number) =>
    [...m].filter(([k]) => !/^\((root|program|idle)\)/.test(k)).sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, ms]) => ({ name, ms }));
  return { total: top(total, 30), self: top(self, 20) };
}

interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: { name?: string; data?: { functionName?: string; url?: string; type?: string } };
}

function longestTasks(events: TraceEvent[]): TraceTask[] {
  const main = events.find((e) => e.name === "thread_name" && e.args?.name === "CrRendererMain" && events.some((x) => x.pid === e.pid && x.name === "FunctionCall"));
  if (!main) return [];
  const onMain = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === "X" && e.dur !== undefined);
  const tasks = onMain.filter((e) => e.name === "RunTask" && e.dur! >= 30_000).sort((a, b) => b.dur! - a.dur!).slice(0, 8);
  return tasks.map((task) => {
    const inside = onMain.filter((e) => e !== task && e.name !== "RunTask" && e.ts >= task.ts && e.ts + e.dur! <= task.ts + task.dur!);
    const byName = new Map<string, number>();
    for (const e of inside) {
      const label = e.name === "FunctionCall" || e.name === "EvaluateScript" ? `${e.name} ${e.args?.data?.functionName ?? ""}`.trim() : e.name === "EventDispatch" ? `EventDispatch ${e.args?.data?.type ?? ""}` : e.name;
      byName.set(label, Math.max(byName.get(label) ?? 0, e.dur!));
    }
    const top = [...byName].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([n, us]) => ({ name: n, ms: Math.round(us / 100) / 10 }));
    return { ms: Math.round(task.dur! / 100) / 10, top };
  });
}

/** The page's JS heap in use after garbage collection, and the ArrayBuffers' memory (outside that heap). */
async function heapUsed(cdp: CDPSession): Promise<{ heap: number; buffers: number }> {
  await cdp.send("HeapProfiler.collectGarbage");
  await cdp.send("HeapProfiler.collectGarbage");
  const { usedSize, backingStorageSize } = (await cdp.send("Runtime.getHeapUsage")) as { usedSize: number; backingStorageSize?: number };
  return { heap: usedSize, buffers: backingStorageSize ?? 0 };
}

// ---------------------------------------------------------------------------------------------------------------
// The scenarios.

const now = (page: Page) => page.evaluate(() => performance.now());

/**
 * Imports `file` through the page's "Import JSONL" and waits, in the page, until the overview shows its rows (those
 * of the import, or of its preview while a big file is still being read: the preview banner is there), then clicks
 * the row of sample `click` and waits until the transcript of that sample is drawn (a frame after it is in the DOM),
 * and until the whole file is imported (the import's message). Returns the marks (`imported`: the whole file).
 */
async function importAndOpen(page: Page, file: string, click: number) {
  await page.evaluate(
    (click) => {
      const w = window as unknown as { __open: Promise<Record<string, number>> };
      const frame = () => new Promise<void>((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      const input = document.querySelector<HTMLInputElement>('input[aria-label="Import JSONL"]')!;
      w.__open = new Promise((resolve, reject) => {
        input.addEventListener(
          "change",
          () => {
            const t0 = performance.now();
            const marks: Record<string, number> = { change: t0 };
            const rowSelector = `[data-testid="sample-row"][data-sample="${click}"]`;
            // The whole file imported (the import's message), and the end of it all (interactive and imported).
            const settle = () => {
              const message = document.querySelector('[data-testid="keep-message"]')?.textContent ?? "";
              if (message.startsWith("could not") || message.startsWith("stopped")) {
                whole.disconnect();
                return reject(new Error(message));
              }
              if (marks.imported === undefined && message.startsWith("imported")) marks.imported = performance.now();
              if (marks.imported !== undefined && marks.interactive !== undefined) {
                whole.disconnect();
                resolve(marks);
              }
            };
            const whole = new MutationObserver(settle);
            whole.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
            const check = async () => {
              if (marks.shown !== undefined) return;
              const message = document.querySelector('[data-testid="keep-message"]')?.textContent ?? "";
              const previewing = document.querySelector('[data-testid="preview-banner"]') !== null;
              const row = document.querySelector<HTMLElement>(rowSelector);
              const tab = [...document.querySelectorAll('[role="tab"]')].find((t) => t.textContent?.startsWith("Transcript"));
              if (!row || !(message.startsWith("imported") || previewing) || !tab) return;
              observer.disconnect();
              marks.shown = performance.now();
              marks.shown_in_preview = previewing ? 1 : 0;
              await frame();
              marks.painted = performance.now();
              // First input: a click on another sample, until its transcript is drawn.
              const clicked = performance.now();
              row.click();
              const wanted = `Transcript · sample ${click}`;
              while (!(tab.textContent === wanted && document.querySelector('[data-testid="transcript"]'))) await new Promise((r) => setTimeout(r, 0));
              await frame();
              marks.clicked = clicked;
              marks.interactive = performance.now();
              settle();
            };
            // On every change of the page (a mutation observer runs right after it, whatever else is queued).
            const observer = new MutationObserver(() => void check());
            observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
            void check();
          },
          { once: true, capture: true },
        );
      });
    },
    click,
  );
  await page.getByLabel("Import JSONL").setInputFiles(file);
  const marks = await page.evaluate(() => (window as unknown as { __open: Promise<Record<string, number>> }).__open);
  return marks;
}

interface OpenResult {
  file_mb: number;
  /** Rows on screen: of the preview of the file still being read (a big file), or of the import. */
  shown_ms: number;
  shown_in: "preview" | "import";
  painted_ms: number;
  click_to_transcript_ms: number;
  interactive_ms: number;
  /** The whole file read, checked and imported (the import's message). */
  whole_file_ms: number;
  /** From the file input's change to the end of the open (interactive and the whole file imported). */
  long_tasks: LongTaskSummary;
  /** From the change until interactive only. */
  long_tasks_until_interactive: LongTaskSummary;
  heap_before_mb: number;
  heap_after_mb: number;
  /** What the opened run added to the JS heap, to ArrayBuffers (outside it), and both. */
  heap_run_mb: number;
  array_buffers_run_mb: number;
  memory_run_mb: number;
  trace_longest?: TraceTask[] | null;
}

async function openRun(browser: Browser, file: string, keep?: (page: Page, cdp: CDPSession) => Promise<void>): Promise<OpenResult> {
  const { page, cdp } = await newPage(browser);
  try {
    const heapBefore = await heapUsed(cdp);
    const { result: marks, longest } = await withTrace(cdp, "open", () => importAndOpen(page, file, 3));
    const lt = await longTasksIn(page, { start: marks.change!, end: Math.max(marks.interactive!, marks.imported!) });
    const ltInteractive = await longTasksIn(page, { start: marks.change!, end: marks.interactive! });
    const heapAfter = await heapUsed(cdp);
    const out: OpenResult = {
      file_mb: round(statSync(file).size / 1e6, 1),
      shown_ms: Math.round(marks.shown! - marks.change!),
      shown_in: marks.shown_in_preview ? "preview" : "import",
      painted_ms: Math.round(marks.painted! - marks.change!),
      click_to_transcript_ms: Math.round(marks.interactive! - marks.clicked!),
      interactive_ms: Math.round(marks.interactive! - marks.change!),
      whole_file_ms: Math.round(marks.imported! - marks.change!),
      long_tasks: lt,
      long_tasks_until_interactive: ltInteractive,
      heap_before_mb: round(heapBefore.heap / 1e6, 1),
      heap_after_mb: round(heapAfter.heap / 1e6, 1),
      heap_run_mb: round((heapAfter.heap - heapBefore.heap) / 1e6, 1),
      array_buffers_run_mb: round((heapAfter.buffers - heapBefore.buffers) / 1e6, 1),
      memory_run_mb: round((heapAfter.heap + heapAfter.buffers - heapBefore.heap - heapBefore.buffers) / 1e6, 1),
      ...(tracing ? { trace_longest: longest } : {}),
    };
    if (keep) await keep(page, cdp);
    return out;
  } finally {
    await page.context().close();
  }
}

/** Scrolls `selector` (or the document) down a wheel step per frame, then to `jumps` random places, in the page. */
async function scroll(page: Page, target: { selector: string } | { from: string; to: "document" }, step: number, jumps: number) {
  return page.evaluate(
    async ({ target, step, jumps }) => {
      const frame = () => new Promise<number>((r) => requestAnimationFrame(r));
      let el: { scrollTop: number; readonly max: number };
      if ("selector" in target) {
        const box = document.querySelector<HTMLElement>(target.selector)!;
        el = {
          get scrollTop() {
            return box.scrollTop;
          },
          set scrollTop(v: number) {
            box.scrollTop = v;
          },
          get max() {
            return box.scrollHeight - box.clientHeight;
          },
        };
      } else {
        const from = document.querySelector<HTMLElement>(target.from)!;
        const top = from.getBoundingClientRect().top + window.scrollY;
        window.scrollTo(0, top);
        el = {
          get scrollTop() {
            return window.scrollY;
          },
          set scrollTop(v: number) {
            window.scrollTo(0, v);
          },
          get max() {
            return Math.min(top + from.scrollHeight, document.documentElement.scrollHeight) - window.innerHeight;
          },
        };
      }
      await frame();
      const start = performance.now();
      let frames = 0;
      let worst = 0;
      let last = await frame();
      const tick = async () => {
        const t = await frame();
        worst = Math.max(worst, t - last);
        last = t;
        frames += 1;
      };
      while (el.scrollTop < el.max - 1) {
        el.scrollTop = Math.min(el.max, el.scrollTop + step);
        await tick();
      }
      let seed = 12345;
      for (let i = 0; i < jumps; i++) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        el.scrollTop = (seed / 2 ** 31) * el.max;
        await tick();
      }
      return { start, end: performance.now(), frames, distance_px: Math.round(el.max), worst_frame_ms: Math.round(worst) };
    },
    { target, step, jumps },
  );
}

interface ScrollResult {
  distance_px: number;
  frames: number;
  ms: number;
  worst_frame_ms: number;
  long_tasks: LongTaskSummary;
  trace_longest?: TraceTask[] | null;
}

async function scrollResult(page: Page, cdp: CDPSession, name: string, go: () => ReturnType<typeof scroll>): Promise<ScrollResult> {
  const { result: s, longest } = await withTrace(cdp, name, go);
  return {
    distance_px: s.distance_px,
    frames: s.frames,
    ms: Math.round(s.end - s.start),
    worst_frame_ms: s.worst_frame_ms,
    long_tasks: await longTasksIn(page, s),
    ...(tracing ? { trace_longest: longest } : {}),
  };
}

const LIVE_SCENARIO = {
  mode: "async",
  max_seq_len: 1 << 20,
  max_rollout_turns: 20,
  envs: { sliding_puzzle_game: { env: "sliding_puzzle", config: {} } },
  dataset: { task_name: "sliding_puzzle_game", size: 1000, seed: 3, config: { size: 4, shuffle_moves: 101, max_moves: 40 } },
  policy: { kind: "oracle", seed: 0, error_rate: 0.5 },
};

/**
 * 4b at the target's own rate. The built-in policies cannot be slowed down, so the pace comes from the environment,
 * as it would with one that runs code or waits on a server: `bench/paced_env.js`, a user environment module loaded
 * through the lab's "Load a module file" (its own Worker), whose step waits `delay_ms` (± half, seeded, so async
 * samples drift apart). The scripted policy answers `responseBytes` plain ASCII bytes a turn, a token each with the
 * byte-level tokenizer, plus EOS: a sample's turn is turn_start, those tokens, assistant_message and env_step
 * (LIVE_200_EVENTS_PER_TURN events), so a step of LIVE_200_DELAY_MS makes about `rate` events a second; the run lasts
 * `turns` steps (about 18 s). The events are counted as in the full-speed case, on the worker's messages.
 */
const LIVE_200 = { rate: 200, samples: 4, turns: 20, responseBytes: 41 };
const LIVE_200_EVENTS_PER_TURN = LIVE_200.responseBytes + 1 + 3;
const LIVE_200_DELAY_MS = Math.round((1000 * LIVE_200.samples * LIVE_200_EVENTS_PER_TURN) / LIVE_200.rate);

function live200Scenario(mode: "sync" | "async") {
  const response = (sample: number, turn: number) =>
    // Plain ASCII (no added markers): one token a byte.
    `sample ${sample}, turn ${turn}: ok, my move is `.padEnd(LIVE_200.responseBytes, "x").slice(0, LIVE_200.responseBytes);
  return {
    mode,
    max_seq_len: 1 << 20,
    max_rollout_turns: LIVE_200.turns,
    envs: { paced: { env: "paced_env", config: { delay_ms: LIVE_200_DELAY_MS, jitter: 0.5 } } },
    dataset: { task_name: "paced", size: LIVE_200.samples, seed: 0, config: {} },
    policy: { kind: "scripted", responses: Array.from({ length: LIVE_200.samples }, (_, s) => Array.from({ length: LIVE_200.turns }, (_, t) => response(s, t))) },
  };
}

/** Loads bench/paced_env.js into the lab as a user would ("Load a module file"), until it is ready. */
async function loadPacedEnv(page: Page): Promise<void> {
  await page.getByLabel("Environment module file").setInputFiles(join(root, "bench/paced_env.js"));
  await page.locator('[data-testid="user-environment"][data-name="paced_env"][data-status="ready"]').waitFor({ timeout: 30_000 });
}

interface LiveCase {
  /** The trace's name (with the mode) and the results' key prefix. */
  name: "live" | "live200";
  describe(mode: "sync" | "async"): string;
  scenario(mode: "sync" | "async"): unknown;
  prepare?(page: Page): Promise<void>;
  /** The rate the case is sized for (absent: as fast as the policy goes). */
  target_events_per_s?: number;
}

const LIVE_CASES: Record<LiveCase["name"], LiveCase> = {
  live: {
    name: "live",
    describe: (mode) => `oracle (error rate 0.5), 1,000 × up to 20 turns, ${mode}, 4×4 sliding puzzles`,
    scenario: (mode) => ({ ...LIVE_SCENARIO, mode }),
  },
  live200: {
    name: "live200",
    describe: (mode) =>
      `scripted (${LIVE_200.responseBytes}-byte answers), ${LIVE_200.samples} × ${LIVE_200.turns} turns, ${mode}, bench/paced_env.js (a loaded module; step ${LIVE_200_DELAY_MS} ms ± 50%)`,
    scenario: live200Scenario,
    prepare: loadPacedEnv,
    target_events_per_s: LIVE_200.rate,
  },
};

interface LiveResult {
  scenario: string;
  target_events_per_s?: number;
  events: number;
  worker_messages: number;
  events_per_s: number;
  run_ms: number;
  long_tasks: LongTaskSummary;
  /** The same for the run's last second and what follows its end (saving it, the final views). */
  end_long_tasks: LongTaskSummary;
  heap_after_mb: number;
  array_buffers_after_mb: number;
  trace_longest?: TraceTask[] | null;
}

async function liveRun(browser: Browser, mode: "sync" | "async", live: LiveCase = LIVE_CASES.live): Promise<LiveResult> {
  const { page, cdp } = await newPage(browser);
  try {
    await live.prepare?.(page);
    const scenario = live.scenario(mode);
    await page.getByText("Scenario JSON (what runs)").click();
    await page.getByLabel("Scenario", { exact: true }).fill(JSON.stringify(scenario));
    const status = page.getByTestId("run-status");
    const { result: w, longest } = await withTrace(cdp, `${live.name}-${mode}`, async () => {
      const clicked = await now(page);
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await status.filter({ hasText: /^(finished|failed)$/ }).waitFor({ timeout: 10 * 60_000 });
      if ((await status.textContent()) !== "finished") throw new Error(`the live run failed: ${await page.getByTestId("run-error").textContent()}`);
      // What the end of a run costs (the final views, saving it in IndexedDB) is part of it: wait a while longer.
      await page.waitForTimeout(2000);
      return { clicked, end: await now(page) };
    });
    const probe = await page.evaluate(() => {
      const p = (window as unknown as { __probe: PageProbe }).__probe;
      return { events: p.events, messages: p.messages, first: p.firstEvent, last: p.lastEvent };
    });
    if (!probe.events || probe.first === null || probe.last === null) throw new Error("no rollout events reached the page");
    const runMs = probe.last - probe.first;
    return {
      scenario: live.describe(mode),
      ...(live.target_events_per_s ? { target_events_per_s: live.target_events_per_s } : {}),
      events: probe.events,
      worker_messages: probe.messages,
      events_per_s: Math.round(probe.events / (runMs / 1000)),
      run_ms: Math.round(runMs),
      long_tasks: await longTasksIn(page, { start: probe.first, end: probe.last }),
      end_long_tasks: await longTasksIn(page, { start: probe.last - 1000, end: w.end }),
      ...(await heapUsed(cdp).then((h) => ({ heap_after_mb: round(h.heap / 1e6, 1), array_buffers_after_mb: round(h.buffers / 1e6, 1) }))),
      ...(tracing ? { trace_longest: longest } : {}),
    };
  } finally {
    await page.context().close();
  }
}

// ---------------------------------------------------------------------------------------------------------------

const round = (x: number, digits = 0) => Math.round(x * 10 ** digits) / 10 ** digits;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function main() {
  console.log("fixtures (built once, under bench/results/fixtures/) …");
  const big = await fixtureFile({ samples: 1000, turns: 20, seed: 1 });
  const long = await fixtureFile({ samples: 4, turns: 200, seed: 2 });
  const server = startPreview(dist, port);
  const results: Record<string, unknown[]> = {};
  const push = (key: string, value: unknown) => (results[key] ??= []).push(value);
  try {
    await waitForServer(`http://127.0.0.1:${port}/`);
    const browser = await launch();
    try {
      for (let r = 0; r < runs; r++) {
        if (only.has("open") || only.has("scroll")) {
          console.log(`open 1,000 × 20 (run ${r + 1}/${runs}) …`);
          const open = await openRun(browser, big, async (page, cdp) => {
            if (!only.has("scroll")) return;
            console.log("scroll the batch overview …");
            push("scroll_overview", await scrollResult(page, cdp, "scroll-overview", () => scroll(page, { selector: ".ov-scroll" }, 120, 20)));
          });
          push("open", open);
        }
        if (only.has("scroll") || only.has("scroll200")) {
          console.log("open and scroll a 200-turn transcript …");
          const open = await openRun(browser, long, async (page, cdp) => {
            push("scroll_transcript", await scrollResult(page, cdp, "scroll-transcript", () => scroll(page, { from: '[data-testid="transcript"]', to: "document" }, 120, 20)));
          });
          push("open_200_turns", open);
        }
        if (only.has("live")) {
          for (const mode of (option("modes") ?? "sync,async").split(",") as ("sync" | "async")[]) {
            console.log(`live run, ${mode} (run ${r + 1}/${runs}) …`);
            push(`live_${mode}`, await liveRun(browser, mode));
          }
        }
        if (only.has("live200")) {
          for (const mode of (option("modes") ?? "sync,async").split(",") as ("sync" | "async")[]) {
            console.log(`live run at ~${LIVE_200.rate} events/s, ${mode} (run ${r + 1}/${runs}) …`);
            const result = await liveRun(browser, mode, LIVE_CASES.live200);
            console.log(
              `  ${result.events} events in ${result.run_ms} ms: ${result.events_per_s} events/s; long tasks during the run ${result.long_tasks.count_over_50ms} (longest ${result.long_tasks.longest_ms ?? "< 50"} ms), at its end ${result.end_long_tasks.count_over_50ms} (longest ${result.end_long_tasks.longest_ms ?? "< 50"} ms)`,
            );
            push(`live_200_${mode}`, result);
          }
        }
      }
    } finally {
      await browser.close();
    }
  } finally {
    server.kill();
  }
  report(results);
}

function report(results: Record<string, unknown[]>) {
  const verdict = (count: number | undefined, longest: number | null | undefined) =>
    count === undefined ? "-" : count === 0 ? "met (none over 50 ms)" : `missed: ${count} over 50 ms, longest ${longest} ms (${(longest ?? 0) - LONG_TASK_MS} ms over)`;
  const rows: Record<string, string | number>[] = [];
  const open = results.open as OpenResult[] | undefined;
  if (open) {
    const ms = median(open.map((o) => o.interactive_ms));
    rows.push({
      figure: "4a. open 1,000 × 20, until a click shows a transcript",
      target: "< 1,000 ms",
      measured: `${ms} ms (shown ${median(open.map((o) => o.shown_ms))} ms, in the ${open[0]!.shown_in}; file ${open[0]!.file_mb} MB)`,
      verdict: ms < 1000 ? "met" : `missed by ${ms - 1000} ms (${round(ms / 1000, 1)}×)`,
    });
    rows.push({
      figure: "4a. open 1,000 × 20, until the whole file is imported",
      target: "(reported)",
      measured: `${median(open.map((o) => o.whole_file_ms))} ms`,
      verdict: "-",
    });
    rows.push({
      figure: "(5.) the opened run's memory in the page (JS heap + ArrayBuffers)",
      target: "(reported)",
      measured: `${median(open.map((o) => o.memory_run_mb))} MB (${median(open.map((o) => o.heap_run_mb))} + ${median(open.map((o) => o.array_buffers_run_mb))})`,
      verdict: "-",
    });
    rows.push({
      figure: "4a. long tasks while opening (until imported; until interactive)",
      target: "(reported)",
      measured: `${median(open.map((o) => o.long_tasks.count_over_50ms))}, longest ${median(open.map((o) => o.long_tasks.longest_ms ?? 0))} ms; ${median(open.map((o) => o.long_tasks_until_interactive.count_over_50ms))}, longest ${median(open.map((o) => o.long_tasks_until_interactive.longest_ms ?? 0))} ms`,
      verdict: "-",
    });
  }
  for (const [key, mode] of [
    ["live_sync", "sync"],
    ["live_async", "async"],
    ["live_200_sync", `sync at the target's rate`],
    ["live_200_async", `async at the target's rate`],
  ] as const) {
    const live = results[key] as LiveResult[] | undefined;
    if (!live) continue;
    const worst = live.reduce((a, b) => (b.long_tasks.count_over_50ms > a.long_tasks.count_over_50ms ? b : a));
    rows.push({
      figure: `4b. live run (${mode}), ${median(live.map((l) => l.events_per_s))} events/s`,
      target: "no task > 50 ms",
      measured: `${worst.long_tasks.count_over_50ms} over 50 ms, longest ${worst.long_tasks.longest_ms ?? "< 50"} ms`,
      verdict: verdict(worst.long_tasks.count_over_50ms, worst.long_tasks.longest_ms),
    });
    const endWorst = live.reduce((a, b) => (b.end_long_tasks.count_over_50ms > a.end_long_tasks.count_over_50ms ? b : a));
    rows.push({
      figure: `4b. the run's end (${mode}): last second, saving, final views`,
      target: "no task > 50 ms",
      measured: `${endWorst.end_long_tasks.count_over_50ms} over 50 ms, longest ${endWorst.end_long_tasks.longest_ms ?? "< 50"} ms`,
      verdict: verdict(endWorst.end_long_tasks.count_over_50ms, endWorst.end_long_tasks.longest_ms),
    });
  }
  for (const [key, label] of [
    ["scroll_overview", "4c. scroll the batch overview (1,000 rows)"],
    ["scroll_transcript", "4c. scroll a 200-turn transcript"],
  ] as const) {
    const s = results[key] as ScrollResult[] | undefined;
    if (!s) continue;
    const worst = s.reduce((a, b) => (b.long_tasks.count_over_50ms > a.long_tasks.count_over_50ms ? b : a));
    rows.push({
      figure: label,
      target: "no task > 50 ms",
      measured: `${worst.long_tasks.count_over_50ms} over 50 ms (${worst.frames} frames, worst frame ${worst.worst_frame_ms} ms)`,
      verdict: verdict(worst.long_tasks.count_over_50ms, worst.long_tasks.longest_ms),
    });
  }
  const o200 = results.open_200_turns as OpenResult[] | undefined;
  if (o200) {
    rows.push({
      figure: "4c. (opening the 200-turn transcript)",
      target: "(reported)",
      measured: `${median(o200.map((o) => o.interactive_ms))} ms; ${o200[0]!.long_tasks.count_over_50ms} long tasks, longest ${o200[0]!.long_tasks.longest_ms ?? "< 50"} ms`,
      verdict: "-",
    });
  }
  console.table(rows);
  mkdirSync(join(root, "bench/results"), { recursive: true });
  const file = option("out") ? resolve(option("out")!) : join(root, "bench/results/page.json");
  const partial = option("only") ? { only: [...only] } : {};
  writeFileSync(
    file,
    `${JSON.stringify({ measured_at: new Date().toISOString(), machine: machine(), browser: "Chromium (headless, /usr/bin/chromium)", served: dist, runs, ...partial, summary: rows, results }, null, 2)}\n`,
  );
  console.log(`wrote ${file}`);
}

await main();
