/**
 * A real WebGPU device loss, mid-generation: in the "webgpu" project (Chromium with --enable-unsafe-webgpu, a
 * SwiftShader adapter here) the test hook calls `destroy()` on onnxruntime's own GPUDevice while the tiny model
 * generates a turn (the hook holds that generation call before it returns, so the loss surely lands during it); its
 * `lost` promise resolves as after a driver reset.
 * With "on device loss: stop" the run stops with the reason and keeps what finished; with "fall back to WASM" the
 * model is loaded on WASM in a fresh model host worker and the interrupted turn runs again there.
 * Also: fp16 on an adapter without shader-f16 is refused at load with the file and the reason.
 */

import type { Page } from "@playwright/test";
import { expect, setScenario, test, type Guard } from "./fixtures.js";
import { startFaultyHub } from "./faulty-hub.js";

const board = { size: 2, grid: [[1, 2], [0, 3]], solution: [[1, 2], [3, 0]], empty_pos: [1, 0], commands: {} };
const scenario = (device: string, turns = 3) => ({
  mode: "sync",
  max_seq_len: 4096,
  max_rollout_turns: turns,
  max_new_tokens: 24,
  greedy: true,
  envs: { t: { env: "sliding_puzzle", config: {} } },
  // Sample 0 may make no move (it ends after its first turn); sample 1 goes on.
  samples: [0, 30].map((max_moves) => ({
    task_name: "t",
    message_log: [{ role: "user", content: "<|im_start|>user\nSolve the puzzle.<|im_end|>\n<|im_start|>assistant\n" }],
    extra_env_info: { game_state: board, num_moves: 0, max_moves },
  })),
  policy: { kind: "model", model: "builtin:tiny", device },
});

const status = (page: Page) => page.getByTestId("run-status");

/** transformers.js logs a failed inference of the lost device from the worker (if one ran on it): expected here, and only that. */
function allowLostDeviceLogs(guard: Guard) {
  const expected = /^(An error occurred during model execution: .*Device was lost|Inputs given to model:)/s;
  const kept = guard.consoleErrors.filter((m) => !expected.test(m));
  guard.consoleErrors.length = 0;
  guard.consoleErrors.push(...kept);
}

type Hook = { startPaused(on: boolean): Promise<string>; holdGeneration(): Promise<string | null>; generationHeld(): Promise<string | null>; loseDevice(): Promise<string | null> };
/** The test hook of `?faults=1` (src/app/faults-debug.ts). */
const hook = <K extends keyof Hook>(page: Page, name: K, ...args: Parameters<Hook[K]>) =>
  page.evaluate(([name, args]) => (window as unknown as { __rolloutLabFaults: Record<string, (...a: unknown[]) => Promise<string | null>> }).__rolloutLabFaults[name]!(...args), [name, args] as const);

/**
 * Runs the scenario on WebGPU and destroys the device while sample 1 generates its second turn, whatever the GPU's
 * speed: the run starts paused (the test hook), one Step runs the first turn (sample 0 ends, sample 1's first turn
 * finishes on WebGPU), then the run resumes with its next generation call held before it returns (the test hook's
 * `holdGeneration`: on the device, inside the device-loss guard), and the device is destroyed while it is held.
 */
async function loseDeviceMidGeneration(page: Page) {
  await hook(page, "startPaused", true);
  await setScenario(page, scenario("webgpu"));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("paused");
  // Only this run: the next ones run through.
  await hook(page, "startPaused", false);
  await expect(page.getByTestId("model-status")).toContainText("ready on WEBGPU", { timeout: 120_000 });
  await page.getByRole("button", { name: "Step" }).click();
  const ending = (sample: number) => page.locator(`[data-testid="sample-row"][data-sample="${sample}"] [data-testid="termination"]`);
  await expect(ending(0)).toHaveText(/^terminated by the environment/, { timeout: 120_000 });
  await expect(ending(1)).toHaveText("waiting for turn 1");
  await expect(status(page)).toHaveText("paused");
  // Sample 1's second turn generates, and is held before its call returns: the loss lands during it.
  expect(await hook(page, "holdGeneration")).toBe("armed");
  await page.getByRole("button", { name: "Resume" }).click();
  expect(await hook(page, "generationHeld")).toBe("held");
  await expect(ending(1)).toHaveText("generating turn 1");
  expect(await hook(page, "loseDevice")).toBe("destroyed");
}

test("a real device loss mid-generation, on device loss: stop — the run stops with the reason, what finished is kept, the next run gets a fresh device", async ({ page, guard }) => {
  test.setTimeout(240_000);
  await page.goto("/?faults=1");
  await loseDeviceMidGeneration(page);
  await expect(status(page)).toHaveText("failed", { timeout: 30_000 });
  await expect(page.getByTestId("run-error")).toHaveText(
    "the WebGPU device was lost (destroyed: Device was destroyed.) during the run, which stopped (on device loss: stop). The samples and turns that finished are kept; those under way were cancelled.",
  );
  expect(await page.getByTestId("termination").allTextContents()).toEqual(["terminated by the environment", "cancelled"]);
  await page.locator('[data-testid="sample-row"][data-sample="1"] [data-turn="0"]').click();
  await expect(page.getByTestId("assistant-message")).toHaveCount(1);
  // A fresh worker, a fresh device: the same run on WebGPU finishes.
  await setScenario(page, scenario("webgpu", 1));
  await page.getByRole("button", { name: /Run/ }).first().click();
  await expect(status(page)).toHaveText("finished", { timeout: 120_000 });
  await expect(page.getByTestId("model-status")).toContainText("ready on WEBGPU");
  allowLostDeviceLogs(guard);
});

test("a real device loss mid-generation, on device loss: fall back to WASM — the interrupted turn runs again on WASM and the run ends with a pure WASM run's tokens", async ({ page, guard }) => {
  test.setTimeout(240_000);
  await page.goto("/?faults=1");
  await page.getByLabel("On device loss").selectOption("wasm");
  await loseDeviceMidGeneration(page);
  await expect(status(page)).toHaveText("finished", { timeout: 60_000 });
  await expect(page.getByTestId("model-status")).toContainText("ready on WASM — fell back to WASM after the WebGPU device was lost (destroyed: Device was destroyed.)");
  const tokens = (page: Page) =>
    page.getByTestId("result-json").textContent().then((text) =>
      (JSON.parse(text!).samples as { message_log: { token_ids: number[] }[]; termination: string }[]).map((s) => [s.termination, s.message_log.map((m) => m.token_ids)]),
    );
  const fellBack = await tokens(page);
  expect(fellBack.map(([termination]) => termination)).toEqual(["terminated", "max_turns"]);
  await setScenario(page, scenario("wasm"));
  await page.getByRole("button", { name: /Run/ }).first().click();
  await expect(status(page)).toHaveText("finished", { timeout: 60_000 });
  expect(fellBack).toEqual(await tokens(page));
  allowLostDeviceLogs(guard);
});

test("fp16 on a WebGPU adapter without shader-f16: the load is refused with the model, the file and the reason", async ({ page, guard }) => {
  const hub = await startFaultyHub();
  try {
    guard.allow(hub.origin);
    await page.goto("/");
    await setScenario(page, { ...scenario("webgpu", 1), policy: { kind: "model", model: "stand-in/healthy", device: "webgpu", dtype: "fp16" } });
    await page.getByLabel("Hub address").fill(`${hub.origin}/`);
    await page.getByRole("button", { name: "Run" }).click();
    await expect(status(page)).toHaveText("failed", { timeout: 30_000 });
    await expect(page.getByTestId("run-error")).toHaveText(
      "could not load model 'stand-in/healthy' (file onnx/model_fp16.onnx): dtype 'fp16' needs the WebGPU feature 'shader-f16', which this adapter does not have; use fp32, q4 or WASM",
    );
  } finally {
    hub.close();
  }
});
