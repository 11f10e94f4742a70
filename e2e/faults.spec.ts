/**
 * Faults of the policy and of the tab, injected into the built lab; each test asserts what the user sees and
 * what survives (README, "Faults and what survives them").
 *
 * - Model load faults: copies of the built-in tiny model with one file broken, served by a stand-in hub on
 *   localhost (e2e/faulty-hub.ts); the error names the model, the file and the reason, and the page runs again.
 * - Mid-run faults: the test hook of `?faults=1` (src/app/faults-debug.ts) crashes the rollout worker, closes it
 *   silently, hangs it in one synchronous loop (Stop then terminates it after the grace period), or loses the WebGPU
 *   device (simulated here: this project's Chromium has no WebGPU; the real loss, `destroy()` on onnxruntime's
 *   device, is in faults.webgpu.spec.ts).
 * - The tab: reload or close it mid-run and the run comes back from IndexedDB; Stop keeps the partial run.
 *
 * Runs use the built-in tiny model on WASM, greedy: three puzzle samples, the first of which may make no move (it
 * ends after its first turn) while the others go on.
 *
 * No test leans on the machine's speed: a run a fault test needs under way starts paused before its first turn (the
 * test hook's `startPaused`) and is stepped turn by turn, and each wait is for the event it needs (a checkpoint
 * written, the recovered runs listed), never a fixed sleep.
 */

import { readFileSync } from "node:fs";
import type { Page } from "@playwright/test";
import { expect, setScenario, test } from "./fixtures.js";
import { startFaultyHub } from "./faulty-hub.js";

const board = { size: 2, grid: [[1, 2], [0, 3]], solution: [[1, 2], [3, 0]], empty_pos: [1, 0], commands: {} };

const scenario = ({ model = "builtin:tiny", device = "wasm", dtype = "fp32", turns = 5, tokens = 12, samples = [0, 30, 30] } = {}) => ({
  mode: "sync",
  max_seq_len: 4096,
  max_rollout_turns: turns,
  max_new_tokens: tokens,
  greedy: true,
  envs: { t: { env: "sliding_puzzle", config: {} } },
  samples: samples.map((max_moves) => ({
    task_name: "t",
    message_log: [{ role: "user", content: "<|im_start|>user\nSolve the puzzle.<|im_end|>\n<|im_start|>assistant\n" }],
    extra_env_info: { game_state: board, num_moves: 0, max_moves },
  })),
  policy: { kind: "model", model, device, dtype },
});

const status = (page: Page) => page.getByTestId("run-status");
const endings = (page: Page) => page.getByTestId("termination").allTextContents();
type Hook = "crashWorker" | "closeWorker" | "loseDevice" | "hangWorker";
const inject = (page: Page, hook: Hook) =>
  page.evaluate((name) => (window as unknown as Record<string, Record<string, () => Promise<string | null>>>).__rolloutLabFaults![name]!(), hook);
/** The test hook: runs started from now on start paused before their first turn (with false: no longer). */
const startPaused = (page: Page, on: boolean) =>
  page.evaluate((value) => (window as unknown as { __rolloutLabFaults: { startPaused(on: boolean): Promise<string> } }).__rolloutLabFaults.startPaused(value), on);

/**
 * Runs the scenario paused after its first turn: sample 0 has ended, samples 1 and 2 are under way. The run starts
 * paused (the test hook; the page's URL has `?faults=1`) and is stepped once: no race between the run and a click.
 */
async function pausedAfterFirstTurn(page: Page, value: unknown = scenario()) {
  await setScenario(page, value);
  await startPaused(page, true);
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("paused");
  // Only this run: the next ones (runsAgain) run through.
  await startPaused(page, false);
  await expect(page.getByTestId("model-status")).toContainText("ready", { timeout: 60_000 });
  await page.getByRole("button", { name: "Step" }).click();
  await expect(page.locator('[data-testid="sample-row"][data-sample="0"] [data-testid="termination"]')).toHaveText(/terminated by the environment/, { timeout: 60_000 });
  await expect(page.locator('[data-testid="sample-row"][data-sample="1"] [data-turn]')).toHaveCount(1);
  await expect(status(page)).toHaveText("paused");
}

/** The run's JSONL export, parsed: sample lines, then the footer. */
async function exported(page: Page) {
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export JSONL" }).click();
  const lines = readFileSync((await (await download).path())!, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  return { samples: lines.filter((l) => "message_log" in l), footer: lines.at(-1)! };
}

const assistantTurns = (sample: Record<string, unknown>) => (sample.message_log as { role: string }[]).filter((m) => m.role === "assistant").length;

/** The page still runs: a short run of the tiny model finishes. */
async function runsAgain(page: Page) {
  await setScenario(page, scenario({ turns: 1, tokens: 4, samples: [30] }));
  await page.getByRole("button", { name: /Run/ }).first().click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
}

test.describe("a model that fails to load", () => {
  const cases = [
    { variant: "truncated-onnx", file: "onnx/model.onnx", reason: "onnxruntime cannot load it (a truncated or corrupt file?): Can't create a session" },
    { variant: "garbled-config", file: "config.json", reason: "not valid JSON: Expected double-quoted property name in JSON at position 42" },
    { variant: "model-type", file: "config.json", reason: "Unsupported model type: nonsense_model" },
    { variant: "garbled-tokenizer", file: "tokenizer.json", reason: "not valid JSON:" },
    { variant: "missing-onnx", file: "onnx/model.onnx", reason: "404 Not Found at" },
  ];
  for (const { variant, file, reason } of cases) {
    test(`${variant}: the error names the model, the file and the reason, and the page runs again`, async ({ page, guard }) => {
      const hub = await startFaultyHub();
      try {
        guard.allow(hub.origin);
        await page.goto("/");
        await setScenario(page, scenario({ model: `stand-in/${variant}`, turns: 1, tokens: 4 }));
        await page.getByLabel("Hub address").fill(`${hub.origin}/`);
        await page.getByRole("button", { name: "Run" }).click();
        await expect(status(page)).toHaveText("failed", { timeout: 30_000 });
        await expect(page.getByTestId("run-error")).toContainText(`could not load model 'stand-in/${variant}' (file ${file}): ${reason}`);
        // The same page loads a sound model next.
        await setScenario(page, scenario({ model: "stand-in/healthy", turns: 1, tokens: 4, samples: [30] }));
        await page.getByRole("button", { name: /Run/ }).first().click();
        await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
        await expect(page.getByTestId("run-error")).toHaveCount(0);
      } finally {
        hub.close();
      }
    });
  }

  test("a device or dtype the model cannot load with: WebGPU without an adapter, fp16 of a built-in model; the page runs again", async ({ page }) => {
    await page.goto("/");
    // No adapter at all in this project's Chromium: forced WebGPU is refused with the reason.
    await setScenario(page, scenario({ device: "webgpu", turns: 1, tokens: 4 }));
    await page.getByRole("button", { name: "Run" }).click();
    await expect(status(page)).toHaveText("failed", { timeout: 30_000 });
    await expect(page.getByTestId("run-error")).toContainText("WebGPU was requested but this browser offers no WebGPU adapter");
    // The built-in models ship fp32 only: another dtype names the model, its file and why.
    await setScenario(page, scenario({ dtype: "fp16", turns: 1, tokens: 4 }));
    await page.getByRole("button", { name: /Run/ }).first().click();
    await expect(status(page)).toHaveText("failed", { timeout: 30_000 });
    await expect(page.getByTestId("run-error")).toContainText("could not load model 'builtin:tiny' (file onnx/model_fp16.onnx): the built-in models ship fp32 weights only");
    await runsAgain(page);
  });
});

test.describe("faults mid-run", () => {
  test("the rollout worker crashes: the run fails with the reason, what finished stays, is exported and saved; the next run starts a fresh worker", async ({ page }) => {
    await page.goto("/?faults=1");
    await pausedAfterFirstTurn(page);
    await inject(page, "crashWorker");
    await expect(status(page)).toHaveText("failed");
    await expect(page.getByTestId("run-error")).toHaveText("the rollout worker crashed: Uncaught Error: injected fault: the rollout worker crashed (test hook)");
    const words = await endings(page);
    expect(words[0]).toMatch(/^terminated by the environment/);
    for (const w of words.slice(1)) expect(w).toBe("error: the run ended before this sample finished: the rollout worker crashed: Uncaught Error: injected fault: the rollout worker crashed (test hook)");
    // The finished turn of a sample under way is still there.
    await page.locator('[data-testid="sample-row"][data-sample="1"] [data-turn="0"]').click();
    await expect(page.getByTestId("assistant-message")).toHaveCount(1);
    const { samples } = await exported(page);
    expect(samples.map((s) => s.termination)).toEqual(["terminated", "error", "error"]);
    expect(samples.map(assistantTurns)).toEqual([1, 1, 1]);
    await page.getByText(/Saved runs/).click();
    await expect(page.getByTestId("saved-runs")).toContainText("failed · sync · 1 of 3 samples finished");
    await runsAgain(page);
    // Reopened after a reload, the saved run is still the failed run, with why (it read back as finished, no error).
    await page.reload();
    await page.getByText(/Saved runs/).click();
    await page.getByTestId("saved-runs").getByRole("button", { name: /^failed · sync · 1 of 3 samples finished/ }).click();
    await expect(status(page)).toHaveText("failed");
    await expect(page.getByTestId("run-error")).toHaveText("the rollout worker crashed: Uncaught Error: injected fault: the rollout worker crashed (test hook)");
    expect((await endings(page)).slice(1)).toEqual(words.slice(1));
  });

  test("the rollout worker hangs in one long call: Stop terminates it after 3 s with the reason; what finished stays, is exported and saved; the next run starts a fresh worker", async ({ page }) => {
    const stuck = "the rollout worker did not stop within 3 s (busy in one long call); it was terminated — finished samples are kept";
    await page.goto("/?faults=1");
    // Paused between turns (not racing the run's end): the worker then busy-loops for a minute, as inside one long
    // WASM call; it reads no message, Stop included.
    await pausedAfterFirstTurn(page);
    await inject(page, "hangWorker");
    const stoppedAt = Date.now();
    await page.getByRole("button", { name: "Stop" }).click();
    await expect(page.getByTestId("run-error")).toHaveText(stuck, { timeout: 20_000 });
    // Never before the grace period; the bound above it only says the watchdog fired, on however busy a machine.
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(2_900);
    expect(Date.now() - stoppedAt).toBeLessThan(20_000);
    await expect(status(page)).toHaveText("failed");
    const words = await endings(page);
    expect(words[0]).toMatch(/^terminated by the environment/);
    for (const w of words.slice(1)) expect(w).toBe(`cancelled: the run ended before this sample finished: ${stuck}`);
    // The finished turns of the samples under way are still there.
    await page.locator('[data-testid="sample-row"][data-sample="1"] [data-turn="0"]').click();
    await expect(page.getByTestId("assistant-message").first()).toBeVisible();
    const { samples } = await exported(page);
    expect(samples.map((s) => s.termination)).toEqual(["terminated", "cancelled", "cancelled"]);
    for (const s of samples) expect(assistantTurns(s)).toBeGreaterThanOrEqual(1);
    await page.getByText(/Saved runs/).click();
    await expect(page.getByTestId("saved-runs")).toContainText("failed · sync · 1 of 3 samples finished");
    await expect.poll(() => checkpoints(page)).toEqual([]);
    await runsAgain(page);
  });

  test("the rollout worker stops silently (closed): the page notices, the run fails with the reason, what finished stays", async ({ page }) => {
    await page.goto("/?faults=1");
    await pausedAfterFirstTurn(page);
    await inject(page, "closeWorker");
    await expect(status(page)).toHaveText("failed", { timeout: 10_000 });
    await expect(page.getByTestId("run-error")).toHaveText("the rollout worker stopped unexpectedly (it was closed or killed)");
    expect((await endings(page)).map((w) => w.split(":")[0])).toEqual(["terminated by the environment", "error", "error"]);
    await runsAgain(page);
  });

  test("the WebGPU device is lost, on device loss: stop (the default) — the run stops with the reason, what finished is kept", async ({ page }) => {
    await page.goto("/?faults=1");
    await expect(page.getByLabel("On device loss")).toHaveValue("stop");
    await pausedAfterFirstTurn(page);
    expect(await inject(page, "loseDevice")).toBe("simulated");
    await expect(status(page)).toHaveText("failed");
    await expect(page.getByTestId("run-error")).toHaveText(
      "the WebGPU device was lost (unknown: no WebGPU device in use, so the loss is simulated) [simulated by the test hook] during the run, which stopped (on device loss: stop). The samples and turns that finished are kept; those under way were cancelled.",
    );
    expect(await endings(page)).toEqual(["terminated by the environment", "cancelled", "cancelled"]);
    const { samples, footer } = await exported(page);
    expect(samples.map(assistantTurns)).toEqual([1, 1, 1]);
    expect(footer.partial).toBe(true);
    await runsAgain(page);
  });

  test("the WebGPU device is lost, on device loss: fall back to WASM — the run goes on on WASM and ends as an undisturbed run", async ({ page }) => {
    await page.goto("/?faults=1");
    await page.getByLabel("On device loss").selectOption("wasm");
    await pausedAfterFirstTurn(page);
    expect(await inject(page, "loseDevice")).toBe("simulated");
    await page.getByRole("button", { name: "Resume" }).click();
    await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
    await expect(page.getByTestId("model-status")).toContainText("ready on WASM");
    await expect(page.getByTestId("model-status")).toContainText("fell back to WASM after the WebGPU device was lost");
    const samples = JSON.parse((await page.getByTestId("result-json").textContent())!).samples;
    expect(samples.map((s: { termination: string }) => s.termination)).toEqual(["terminated", "max_turns", "max_turns"]);
    // The same run, undisturbed (a fresh worker: the lost device's is not used again).
    await page.getByRole("button", { name: "Run again" }).click();
    await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
    const undisturbed = JSON.parse((await page.getByTestId("result-json").textContent())!).samples;
    // Tokens and texts exactly; log-probabilities to float rounding (the turn run again on WASM had no kept cache).
    type Logged = { message_log: { generation_logprobs?: number[] }[] };
    const withoutLogprobs = (runs: Logged[]) => runs.map((s) => s.message_log.map(({ generation_logprobs: _lp, ...m }) => m));
    const logprobs = (runs: Logged[]) => runs.flatMap((s) => s.message_log.flatMap((m) => m.generation_logprobs ?? []));
    expect(withoutLogprobs(samples)).toEqual(withoutLogprobs(undisturbed));
    const expected = logprobs(undisturbed);
    logprobs(samples).forEach((lp, i) => expect(Math.abs(lp - expected[i]!)).toBeLessThan(1e-5));
    expect(logprobs(samples)).toHaveLength(expected.length);
  });
});

/** The interrupted runs' checkpoints in this browser, read the way the page writes them. */
const checkpoints = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<{ finished: number; total: number }[]>((resolve, reject) => {
        const open = indexedDB.open("rollout-lab-recovery", 1);
        open.onupgradeneeded = () => open.result.createObjectStore("checkpoints", { keyPath: "id" });
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const all = open.result.transaction("checkpoints").objectStore("checkpoints").getAll();
          all.onsuccess = () => {
            resolve((all.result as { finished: number; total: number }[]).map(({ finished, total }) => ({ finished, total })));
            open.result.close();
          };
        };
      }),
  );

/** A longer run (40 turns), live (paused after its first turn: sample 0 ended, 1 and 2 under way) when the page goes away. */
const longRun = () => scenario({ turns: 40, tokens: 24 });

/** The run is live with sample 0 finished, and its checkpoint says so: whatever the machine's speed. */
async function runUntilCheckpointed(page: Page) {
  await pausedAfterFirstTurn(page, longRun());
  await expect.poll(() => checkpoints(page), { timeout: 30_000 }).toEqual([{ finished: 1, total: 3 }]);
  await expect(status(page)).toHaveText("paused");
}

/** The page has listed the runs it could recover (so "none on offer" is its answer, not a list still being read). */
const listed = (page: Page) => expect(page.getByTestId("recovered-runs-listed")).toHaveAttribute("data-listed", "true");

async function recover(page: Page) {
  const offer = page.getByTestId("recovered-run");
  await expect(offer).toHaveCount(1);
  await expect(offer).toContainText(/^Recovered run from .+: 1 of 3 samples finished/);
  await offer.getByRole("button", { name: "Show recovered run" }).click();
  await expect(page.getByTestId("recovered-run")).toHaveCount(0);
  const words = await endings(page);
  expect(words[0]).toMatch(/^terminated by the environment/);
  for (const w of words.slice(1)) expect(w).toBe("cancelled: the run ended before this sample finished: the page was closed or reloaded mid-run (recovered from this browser's storage)");
  const { samples, footer } = await exported(page);
  expect(samples).toHaveLength(3);
  expect(samples[1]!.termination).toBe("cancelled");
  expect(assistantTurns(samples[1]!)).toBeGreaterThanOrEqual(1);
  expect(footer.partial).toBe(true);
  expect((footer.scenario as { max_rollout_turns: number }).max_rollout_turns).toBe(40);
  await page.getByText(/Saved runs/).click();
  await expect(page.getByTestId("saved-runs")).toContainText("recovered · sync · 1 of 3 samples finished");
  expect(await checkpoints(page)).toEqual([]);
}

test.describe("the tab", () => {
  test("reloaded mid-run: the run is offered again from IndexedDB, shown, exported and kept among the saved runs", async ({ page }) => {
    await page.goto("/?faults=1");
    await runUntilCheckpointed(page);
    await page.reload();
    await recover(page);
    // Offered once: after a reload it is a saved run, not a recovered one.
    await page.reload();
    await expect(page.getByText(/Saved runs/)).toBeVisible();
    await listed(page);
    await expect(page.getByTestId("recovered-run")).toHaveCount(0);
  });

  test("closed mid-run: a new page of the same browser offers the run", async ({ page, context }) => {
    await page.goto("/?faults=1");
    await runUntilCheckpointed(page);
    await page.close();
    const again = await context.newPage();
    await again.goto("/");
    await recover(again);
  });

  test("a run still going in another tab is not offered as recovered", async ({ page, context }) => {
    await page.goto("/?faults=1");
    await runUntilCheckpointed(page);
    const other = await context.newPage();
    await other.goto("/");
    // Its checkpoint is there; the other tab, once it has listed what it could recover, does not offer it.
    await listed(other);
    await expect(other.getByTestId("recovered-run")).toHaveCount(0);
    expect(await checkpoints(other)).toEqual([{ finished: 1, total: 3 }]);
    await page.getByRole("button", { name: "Stop" }).click();
    await expect(status(page)).toHaveText("finished");
  });

  test("Stop keeps the partial run: it is saved with its finished and cancelled samples, and nothing is left to recover", async ({ page }) => {
    await page.goto("/?faults=1");
    await pausedAfterFirstTurn(page);
    await page.getByRole("button", { name: "Stop" }).click();
    await expect(status(page)).toHaveText("finished");
    expect(await endings(page)).toEqual(["terminated by the environment", "cancelled", "cancelled"]);
    const transcript = (await page.getByTestId("transcript").textContent())!;
    // Saved once its save committed, and only then is its checkpoint gone.
    await expect(page.getByText(/Saved runs/)).toBeVisible();
    await expect.poll(() => checkpoints(page)).toEqual([]);
    await page.reload();
    await expect(page.getByText(/Saved runs/)).toBeVisible();
    await listed(page);
    await expect(page.getByTestId("recovered-run")).toHaveCount(0);
    await page.getByText(/Saved runs/).click();
    await page.getByTestId("saved-runs").getByRole("button").first().click();
    await expect(page.getByTestId("transcript")).toHaveText(transcript);
    expect(await endings(page)).toEqual(["terminated by the environment", "cancelled", "cancelled"]);
    expect(await checkpoints(page)).toEqual([]);
  });
});

test("an environment step that hangs is cut by the timeout set in the form: its sample ends with the error, the others finish", async ({ page }) => {
  await page.goto("/");
  // Sample 1's step never answers; the others answer at once and end.
  const module = `
export default {
  name: "hanging_env",
  create() {
    return {
      async step(logs, metadata) {
        if (metadata.some((m) => m.n === 1)) await new Promise(() => {});
        return { observations: logs.map(() => ({ role: "environment", content: "<environment>ok</environment>" })),
          metadata: logs.map(() => null), next_stop_strings: null, rewards: logs.map(() => 1), terminateds: logs.map(() => true), answers: null };
      },
    };
  },
  generateDataset({ size, taskName }) {
    return Array.from({ length: size }, (_, n) => ({ task_name: taskName, message_log: [{ role: "user", content: "go" }], extra_env_info: { n }, stop_strings: null }));
  },
};`;
  await page.getByLabel("Environment module file").setInputFiles({ name: "hanging_env.js", mimeType: "text/javascript", buffer: Buffer.from(module) });
  await expect(page.locator('[data-testid="user-environment"][data-name="hanging_env"]')).toHaveAttribute("data-status", "ready");
  await page.getByLabel("Environment", { exact: true }).selectOption("hanging_env");
  await page.getByLabel("Samples").fill("3");
  await page.getByLabel("Mode", { exact: true }).selectOption("async");
  await page.getByLabel("Policy", { exact: true }).selectOption("scripted");
  await page.getByLabel("Scripted responses").fill(JSON.stringify([["a"], ["b"], ["c"]]));
  await page.getByLabel("Environment step timeout (ms, 0: none)").fill("700");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  await expect(page.getByTestId("termination")).toHaveText([
    "terminated by the environment",
    /^error: environment 'hanging_env' step timed out after 700 ms/,
    "terminated by the environment",
  ]);
});
