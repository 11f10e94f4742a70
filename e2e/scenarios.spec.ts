import { expect, loadPreset, test, setScenario } from "./fixtures.js";

test("the sliding puzzle oracle solves every sample in the page", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("run-status")).toHaveText("idle");
  await loadPreset(page, "Sliding puzzle · oracle · sync");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 30_000 });
  const endings = page.getByTestId("termination");
  await expect(endings).toHaveCount(4);
  for (const text of await endings.allTextContents()) expect(text).toBe("terminated by the environment");
  await expect(page.locator('[data-metric="mean_total_reward"]')).toContainText("1");
  await expect(page.getByTestId("transcript")).toContainText("Congratulations! You've solved the puzzle!");
  await page.screenshot({ path: "e2e/artifacts/plain-page-puzzle.png", fullPage: true });
});

test("async mode and the structured workspace run too, with tool calls shown as text", async ({ page }) => {
  await page.goto("/");
  await loadPreset(page, "Workspace · structured tools · oracle with mistakes");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 30_000 });
  await expect(page.getByTestId("transcript")).toContainText("<tool_call>");
  await expect(page.getByTestId("metrics")).toContainText("invalid_action_rate");
  await page.screenshot({ path: "e2e/artifacts/plain-page-workspace.png", fullPage: true });
});

test("a bad scenario gets an error naming the field", async ({ page }) => {
  await page.goto("/");
  await setScenario(page, '{"mode": "both", "max_seq_len": 10, "max_rollout_turns": 1, "envs": {}, "samples": [], "policy": {"kind": "oracle"}}');
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("failed");
  await expect(page.getByTestId("run-error")).toContainText('mode: expected "sync" or "async"');
});

test("model output containing HTML is shown as text and never runs", async ({ page }) => {
  await page.goto("/");
  const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
  const scenario = {
    mode: "sync",
    max_seq_len: 512,
    max_rollout_turns: 1,
    envs: { t: { env: "sliding_puzzle", config: {} } },
    samples: [{ task_name: "t", message_log: [{ role: "user", content: "hi" }], extra_env_info: { game_state: { size: 2, grid: [[1, 2], [0, 3]], solution: [[1, 2], [3, 0]], empty_pos: [1, 0], commands: {} }, num_moves: 0, max_moves: 3 } }],
    policy: { kind: "scripted", responses: [[hostile]] },
  };
  await setScenario(page, JSON.stringify(scenario));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished");
  await expect(page.getByTestId("transcript")).toContainText(hostile);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  await expect(page.locator("main img")).toHaveCount(0);
});
