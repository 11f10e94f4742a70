import type { Page } from "@playwright/test";
import { expect, loadPreset, test, setScenario } from "./fixtures.js";

const status = (page: Page) => page.getByTestId("run-status");

async function runPreset(page: Page, title: string, timeout = 30_000) {
  await page.goto("/");
  await loadPreset(page, title);
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout });
}

// How fast it runs is the benchmarks' business (bench:page, bench:policy); this test only needs it to finish.
test("the default run: one click on Run, the built-in model on the sliding puzzle, finished", async ({ page }) => {
  test.setTimeout(150_000);
  await page.goto("/");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 120_000 });
  const endings = await page.getByTestId("termination").allTextContents();
  expect(endings.length).toBe(3);
  for (const text of endings) expect(text.length).toBeGreaterThan(3);
  await expect(page.getByTestId("metrics")).toContainText("mean_total_reward");
  await page.screenshot({ path: "e2e/artifacts/lab-default-run.png", fullPage: true });
  // A model run's tokens are named by the model's own tokenizer, asked of the worker.
  await page.getByRole("tab", { name: "Tokens" }).click();
  const firstGenerated = page.locator('[data-testid="token-message"][data-kind="generated"]').first();
  await expect(firstGenerated).toBeVisible();
  const chips = firstGenerated.locator(".tk-chip");
  await expect.poll(async () => (await chips.allTextContents()).filter((t) => /^#\d+$/.test(t)).length).toBe(0);
  expect(await chips.count()).toBeGreaterThan(0);
});

for (const mode of ["sync", "async"] as const) {
  test(`the oracle solves the puzzle in ${mode} mode: the board changes, rewards and terminations show`, async ({ page }) => {
    await page.goto("/");
    await loadPreset(page, "Oracle demo: the sliding puzzle solved");
    await page.getByLabel("Mode").selectOption(mode);
    await page.getByRole("button", { name: "Run" }).click();
    await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
    for (const text of await page.getByTestId("termination").allTextContents()) expect(text).toContain("terminated");
    await page.getByRole("tab", { name: "Environment" }).click();
    const board = page.getByTestId("puzzle-board");
    // A sample that took three turns or more (a 2×2 board can be solved in one move).
    const rows = page.getByTestId("sample-row");
    let longest = 0;
    for (let i = 0; i < (await rows.count()); i++) if ((await rows.nth(i).locator("[data-turn]").count()) >= 3) longest = i;
    await rows.nth(longest).locator("[data-turn]").first().click();
    // The cells' texts in order, the blank included (a blank moving along a row keeps the numbers' order).
    const cells = () => board.locator("*").evaluateAll((els) => els.filter((e) => e.children.length === 0).map((e) => e.textContent ?? ""));
    const first = await cells();
    await page.keyboard.press("l");
    await page.keyboard.press("l");
    expect(await cells()).not.toEqual(first);
    await page.getByRole("tab", { name: /Transcript/ }).click();
    await expect(page.getByTestId("turn").last()).toContainText("Congratulations! You've solved the puzzle!");
    await page.screenshot({ path: `e2e/artifacts/lab-oracle-${mode}.png`, fullPage: true });
  });
}

type Hook = { startPaused(on: boolean): Promise<string>; holdGeneration(): Promise<string | null>; generationHeld(): Promise<string | null>; releaseGeneration(): Promise<string | null> };
/** The test hook of `?faults=1` (src/app/faults-debug.ts). */
const hook = <K extends keyof Hook>(page: Page, name: K, ...args: Parameters<Hook[K]>) =>
  page.evaluate(([name, args]) => (window as unknown as { __rolloutLabFaults: Record<string, (...a: unknown[]) => Promise<string | null>> }).__rolloutLabFaults[name]!(...args), [name, args] as const);

test("pause, step one turn, resume and stop behave; stopped runs keep their partial results", async ({ page }) => {
  // Every click lands where the test says, whatever the machine's speed: the run starts paused (the test hook of
  // `?faults=1`), and Pause and Stop are pressed while a turn's generation is held (the hook's `holdGeneration`), so
  // the run is surely under way then, and not at its end.
  await page.goto("/?faults=1");
  await page.getByLabel("max_rollout_turns").fill("30");
  // Sample 0 must still be under way at its fourth turn whatever the model plays: with these settings its board is a
  // 3×3 whose shortest solution is 9 moves (the default run's first board is solved in 3, which the trained model does).
  await page.getByLabel("Shuffle moves (max)").fill("30");
  await page.getByLabel("Dataset seed").fill("22");
  expect(await hook(page, "startPaused", true)).toBe("paused");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("paused");
  await hook(page, "startPaused", false);
  await expect(page.getByTestId("model-status")).toContainText("ready", { timeout: 20_000 });
  await expect(page.getByTestId("sample-row")).toHaveCount(3);
  const cells = page.locator('[data-testid="sample-row"][data-sample="0"] [data-turn]');
  const state = page.locator('[data-testid="sample-row"][data-sample="0"] [data-testid="termination"]');
  await expect(state).toHaveText("waiting to start");
  await expect(cells).toHaveCount(0);

  // Step: one turn, then paused again.
  await page.getByRole("button", { name: "Step" }).click();
  await expect(state).toHaveText("waiting for turn 1", { timeout: 20_000 });
  await expect(cells).toHaveCount(1);
  await expect(status(page)).toHaveText("paused");

  // Resume; Pause while the next turn generates: that turn finishes, and the run waits before the one after.
  expect(await hook(page, "holdGeneration")).toBe("armed");
  await page.getByRole("button", { name: "Resume" }).click();
  await expect(status(page)).toHaveText("running");
  expect(await hook(page, "generationHeld")).toBe("held");
  await expect(state).toHaveText("generating turn 1");
  await page.getByRole("button", { name: "Pause" }).click();
  await expect(status(page)).toHaveText("paused");
  expect(await hook(page, "releaseGeneration")).toBe("released");
  await expect(state).toHaveText("waiting for turn 2", { timeout: 20_000 });
  await expect(cells).toHaveCount(2);

  // Step again: one more turn (seen under way, its generation held), then paused.
  expect(await hook(page, "holdGeneration")).toBe("armed");
  await page.getByRole("button", { name: "Step" }).click();
  expect(await hook(page, "generationHeld")).toBe("held");
  await expect(state).toHaveText("generating turn 2");
  await expect(cells).toHaveCount(3);
  expect(await hook(page, "releaseGeneration")).toBe("released");
  await expect(state).toHaveText("waiting for turn 3", { timeout: 20_000 });
  await expect(cells).toHaveCount(3);
  await expect(status(page)).toHaveText("paused");

  // Resume, and Stop while a turn generates: the samples under way are cancelled, what finished is kept.
  expect(await hook(page, "holdGeneration")).toBe("armed");
  await page.getByRole("button", { name: "Resume" }).click();
  await expect(status(page)).toHaveText("running");
  expect(await hook(page, "generationHeld")).toBe("held");
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(status(page)).toHaveText("finished");
  await expect(state).toHaveText(/^cancelled/);
  await expect(cells).toHaveCount(4);
  await page.locator('[data-testid="sample-row"][data-sample="0"] [data-turn="2"]').click();
  await expect(page.getByTestId("assistant-message")).toHaveCount(3);
});

test("export then import gives the same transcript", async ({ page }) => {
  await runPreset(page, "Structured-tools demo: the workspace");
  const transcript = (await page.getByTestId("transcript").textContent())!;
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export JSONL" }).click();
  const file = await (await download).path();
  await page.reload();
  await page.getByLabel("Import JSONL").setInputFiles(file!);
  await expect(page.getByTestId("keep-message")).toContainText("imported");
  await expect(page.getByTestId("transcript")).toHaveText(transcript);
});

test("finished runs survive a reload (IndexedDB)", async ({ page }) => {
  await runPreset(page, "Calculator · scripted · sync");
  const transcript = (await page.getByTestId("transcript").textContent())!;
  // Saving ends a moment after the run does (one IndexedDB write): reloaded once it is saved.
  await expect(page.getByText("Saved runs (1)")).toBeVisible({ timeout: 30_000 });
  await page.reload();
  await page.getByText(/Saved runs/).click();
  await page.getByTestId("saved-runs").getByRole("button").first().click();
  await expect(page.getByTestId("transcript")).toHaveText(transcript);
});

test("the URL reproduces a run", async ({ page, context }) => {
  await runPreset(page, "Calculator · oracle · async");
  const result = JSON.parse((await page.getByTestId("result-json").textContent())!);
  await page.getByRole("button", { name: "Share link" }).click();
  const url = await page.getByTestId("share-link").inputValue();
  expect(url).toContain("#scenario=");
  expect(url).toMatch(/&run=1$/);
  // This tab's address holds the scenario without `run=1`: a reload loads it and runs nothing.
  expect(page.url()).toBe(url.replace(/&run=1$/, ""));
  const other = await context.newPage();
  await other.goto(url);
  await expect(other.getByTestId("run-status")).toHaveText("finished", { timeout: 30_000 });
  const again = JSON.parse((await other.getByTestId("result-json").textContent())!);
  expect(again.samples).toEqual(result.samples);
});

test("model output containing HTML or script is shown as text in every view and never runs", async ({ page }) => {
  await page.goto("/");
  const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script><a href="javascript:window.__pwned=3">x</a>';
  const scenario = {
    mode: "sync",
    max_seq_len: 1024,
    max_rollout_turns: 1,
    envs: { t: { env: "sliding_puzzle", config: {} } },
    samples: [{ task_name: "t", message_log: [{ role: "user", content: hostile }], extra_env_info: { game_state: { size: 2, grid: [[1, 2], [0, 3]], solution: [[1, 2], [3, 0]], empty_pos: [1, 0], commands: {} }, num_moves: 0, max_moves: 3 } }],
    policy: { kind: "scripted", responses: [[`${hostile}<tool_call>{"name": "${hostile.replace(/"/g, "'")}", "arguments": {}}</tool_call><think>${hostile}</think>`]] },
  };
  await setScenario(page, JSON.stringify(scenario));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished");
  await expect(page.getByTestId("transcript")).toContainText("<script>window.__pwned=2</script>");
  for (const tab of ["Tokens", "Environment"]) await page.getByRole("tab", { name: tab }).click();
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  await expect(page.locator("main img, main script, main a[href^='javascript']")).toHaveCount(0);
});

test("keyboard: move between samples and turns without the mouse", async ({ page }) => {
  await runPreset(page, "Oracle demo: the sliding puzzle solved");
  await page.locator("body").click({ position: { x: 5, y: 5 } });
  const selectedRow = page.locator('[data-testid="sample-row"][aria-selected="true"]');
  for (const [key, expected] of [["j", "1"], ["j", "2"], ["j", "3"], ["k", "2"], ["j", "3"]]) {
    await page.keyboard.press(key!);
    await expect(selectedRow).toHaveAttribute("data-sample", expected!);
  }
  await page.keyboard.press("l");
  await page.keyboard.press("l");
  await expect(page.locator('[data-testid="turn"][data-turn="1"]')).toHaveClass(/selected/);
  await page.getByRole("tab", { name: "Tokens" }).click();
  await page.screenshot({ path: "e2e/artifacts/lab-tokens.png", fullPage: true });
});

test("the human policy: the user types the assistant turns, and the run replays as a scripted scenario", async ({ page }) => {
  await page.goto("/");
  await loadPreset(page, "Oracle demo: the sliding puzzle solved");
  await page.getByLabel("Policy", { exact: true }).selectOption("human");
  await page.getByLabel("Samples").fill("1");
  await page.getByLabel("max_rollout_turns").fill("2");
  await page.getByRole("button", { name: "Run" }).click();
  const reply = page.getByLabel("Your reply for sample 0");
  await reply.fill("I will look first. <action>view</action> and more");
  await page.getByRole("button", { name: "Send" }).click();
  await expect(page.getByTestId("human-turn")).toHaveCount(1);
  await reply.fill("<action>view</action>");
  await page.getByRole("button", { name: "Send" }).click();
  await expect(status(page)).toHaveText("finished");
  // Cut at the stop string, as an engine would.
  await expect(page.getByTestId("transcript")).toContainText("I will look first. <action>view</action>");
  await expect(page.getByTestId("transcript")).not.toContainText("and more");
  await expect(page.getByTestId("termination")).toHaveText("max turns reached");
  await page.getByText("Scenario JSON (what runs)").click();
  const scenario = JSON.parse(await page.getByLabel("Scenario", { exact: true }).inputValue());
  expect(scenario.policy).toEqual({ kind: "scripted", responses: [["I will look first. <action>view</action> and more", "<action>view</action>"]] });
});

test("replay: a saved run played back by the replay policy gives the same transcript", async ({ page }) => {
  await runPreset(page, "Calculator · oracle · async");
  const transcript = (await page.getByTestId("transcript").textContent())!;
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export JSONL" }).click();
  const file = await (await download).path();
  // The same scenario, with the replay policy reading the export.
  await page.getByText("Scenario JSON (what runs)").click();
  const scenario = JSON.parse(await page.getByLabel("Scenario", { exact: true }).inputValue());
  await page.getByLabel("Policy", { exact: true }).selectOption("replay");
  await page.getByLabel("Run to replay").setInputFiles({ name: "saved.jsonl", mimeType: "application/x-ndjson", buffer: (await import("node:fs")).readFileSync(file!) });
  await setScenario(page, { ...scenario, policy: { kind: "replay", file: "saved.jsonl" } });
  await page.getByRole("button", { name: /Run/ }).first().click();
  await expect(status(page)).toHaveText("finished");
  await expect(page.getByTestId("transcript")).toHaveText(transcript);
});

test("a batch of 1,000 samples: the overview stays virtualised and the last sample can be opened", async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto("/");
  await page.getByLabel("Environment", { exact: true }).selectOption("calculator");
  await page.getByLabel("Policy", { exact: true }).selectOption("oracle");
  await page.getByLabel("Samples").fill("1000");
  await page.getByLabel("Mode").selectOption("async");
  await page.getByLabel("max_rollout_turns").fill("6");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 90_000 });
  expect(await page.getByTestId("sample-row").count()).toBeLessThan(80);
  // Scrolled to the end of the rows' box, the last row is drawn (again until it holds: the box may still be taking
  // the run's last rows, or be busy drawing, when first scrolled).
  const last = page.locator('[data-testid="sample-row"][data-sample="999"]');
  await expect(async () => {
    await page.locator(".ov-scroll").evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect(last).toBeVisible({ timeout: 2000 });
  }).toPass({ timeout: 30_000 });
  await last.locator("[data-turn]").first().click();
  await expect(page.getByRole("tab", { name: "Transcript · sample 999" })).toBeVisible();
  await expect(page.getByTestId("transcript")).toContainText("calculator");
  await expect(page.locator('[data-metric="total_turns"]')).toBeVisible();
});
