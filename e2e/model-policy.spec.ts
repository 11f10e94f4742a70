import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Page } from "@playwright/test";
import { expect, setScenario, test } from "./fixtures.js";

const exec = promisify(execFile);

/** A greedy model scenario small enough for software WebGPU (a few tokens per turn). */
function greedyScenario(device: "wasm" | "webgpu", maxNewTokens: number, turns: number) {
  return {
    mode: "sync",
    max_seq_len: 2048,
    max_rollout_turns: turns,
    max_new_tokens: maxNewTokens,
    greedy: true,
    envs: { sliding_puzzle_game: { env: "sliding_puzzle", config: {} } },
    dataset: { task_name: "sliding_puzzle_game", size: 2, seed: 4, config: { size: 2, shuffle_moves: 3, max_moves: 5 } },
    policy: { kind: "model", model: "builtin:tiny", device },
  };
}

async function runInPage(page: Page, scenario: object, timeout: number) {
  await page.goto("/");
  await setScenario(page, JSON.stringify(scenario));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout });
  return JSON.parse((await page.getByTestId("result-json").textContent())!) as { samples: { message_log: { token_ids: number[]; generation_logprobs?: number[] }[] }[] };
}

async function runInNode(scenario: object) {
  const dir = await mkdtemp(join(tmpdir(), "e2e-model-"));
  const file = join(dir, "scenario.json");
  await writeFile(file, JSON.stringify({ ...scenario, policy: { kind: "model", model: "builtin:tiny" } }));
  const { stdout } = await exec("npx", ["tsx", "src/cli/rollout.ts", file], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as Awaited<ReturnType<typeof runInPage>>;
}

const tokens = (r: Awaited<ReturnType<typeof runInPage>>) => r.samples.map((s) => s.message_log.map((m) => m.token_ids));

test("the default preset: the built-in trained model in a Worker on WASM, nothing fetched from outside", async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto("/");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 150_000 });
  await expect(page.getByTestId("model-status")).toContainText("builtin:trained");
  await expect(page.getByTestId("model-status")).toContainText("ready on WASM");
  await expect(page.getByTestId("model-status")).toContainText("trained on the lab's own oracle rollouts");
  expect(await page.getByTestId("termination").allTextContents()).toHaveLength(3);
  await page.screenshot({ path: "e2e/artifacts/model-wasm.png", fullPage: true });
});

test("greedy tokens on WASM match Node's, with log-probabilities to 1e-4", async ({ page }) => {
  const scenario = greedyScenario("wasm", 24, 2);
  const [browser, node] = await Promise.all([runInPage(page, scenario, 30_000), runInNode(scenario)]);
  expect(tokens(browser)).toEqual(tokens(node));
  browser.samples.forEach((s, i) =>
    s.message_log.forEach((m, j) =>
      m.generation_logprobs?.forEach((lp, k) => expect(Math.abs(lp - node.samples[i]!.message_log[j]!.generation_logprobs![k]!)).toBeLessThan(1e-4)),
    ),
  );
});

test("a failed load names the model and the reason, and the page keeps working", async ({ page }) => {
  await page.goto("/");
  const scenario = { ...greedyScenario("wasm", 4, 1), policy: { kind: "model", model: "builtin:tiny", dtype: "q4" } };
  await setScenario(page, JSON.stringify(scenario));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("failed");
  await expect(page.getByTestId("run-error")).toContainText("the built-in models ship fp32 weights only; 'q4' is not available for builtin:tiny");
});
