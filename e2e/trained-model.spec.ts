/**
 * builtin:trained in the page on WASM (issue 21): the default run's model is the trained one and its status line
 * says so; on the fixed held-out puzzle of src/policy/builtin-model/trained-builtin.test.ts (dataset seed 1,000,002,
 * greedy) it thinks aloud a board, writes well-formed moves and solves at least one board; with the workspace preset
 * it makes tool calls after think blocks, some of which parse and run.
 */

import type { Page } from "@playwright/test";
import { expect, loadPreset, test } from "./fixtures.js";

const status = (page: Page) => page.getByTestId("run-status");

test("the default model is builtin:trained: on a held-out puzzle, greedy on WASM, it acts and solves", async ({ page }) => {
  test.setTimeout(240_000);
  await page.goto("/");
  await loadPreset(page, "Built-in trained model on the sliding puzzle (default)");
  await expect(page.getByLabel("Built-in or hub model")).toHaveValue("builtin:trained");
  await page.getByLabel("Samples").fill("4");
  await page.getByLabel("Dataset seed").fill("1000002");
  await page.getByLabel("Greedy").check();
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 200_000 });
  await expect(page.getByTestId("model-status")).toContainText("trained on the lab's own oracle rollouts");
  await expect(page.getByTestId("model-status")).toContainText("ready on WASM");
  const endings = await page.getByTestId("termination").allTextContents();
  expect(endings).toHaveLength(4);
  expect(endings.filter((t) => t.includes("terminated")).length).toBeGreaterThan(0);
  await expect(page.getByTestId("metrics")).toContainText("mean_total_reward");
  // Each move follows a think block with the board as the model sees it.
  await expect(page.locator("details.tx-think").first()).toBeVisible();
  await page.screenshot({ path: "e2e/artifacts/trained-model-puzzle.png", fullPage: true });
});

test("the preset 'Trained built-in model: the workspace with tools': tool calls after think blocks, some parsed and run", async ({ page }) => {
  test.setTimeout(420_000);
  await page.goto("/");
  await loadPreset(page, "Trained built-in model: the workspace with tools");
  await expect(page.getByLabel("Structured tool use")).toBeChecked();
  await expect(page.getByLabel("Invalid-action penalty", { exact: true })).toBeChecked();
  await page.getByLabel("Samples").fill("1");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 400_000 });
  const calls = page.getByTestId("tool-call");
  await expect(calls.first()).toBeVisible();
  // A small model: some of its calls parse and run, not necessarily every one (bench:policy-quality counts them);
  // each is shown with the extractor's verdict.
  const verdicts = await calls.evaluateAll((els) => els.map((e) => e.getAttribute("data-verdict")));
  expect(verdicts.length).toBeGreaterThan(1);
  expect(verdicts.every((v) => v !== null)).toBe(true);
  expect(verdicts).toContain("parsed");
  await expect(page.locator("details.tx-think").first()).toBeVisible();
  await page.screenshot({ path: "e2e/artifacts/trained-model-workspace.png", fullPage: true });
});
