import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, setScenario, test } from "./fixtures.js";

/** A text policy on a real vocabulary in the page: the scenario's `tokenizer` is Qwen3's (issue 17). */

const example = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, "..", "src", "scenario", "examples", name), "utf8"));

test("an oracle run with Qwen3's tokenizer runs in the page: its tokens are Qwen3's BPE, not the byte-level vocabulary", async ({ page }) => {
  test.setTimeout(120_000);
  const workspace = example("workspace-structured.json");
  await page.goto("/");
  await setScenario(page, { ...workspace, tokenizer: "builtin:tiny-qwen3", structured: { ...workspace.structured, envelope: "template" } });
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText(/finished/, { timeout: 90_000 });
  expect(await page.getByTestId("outcome").allTextContents()).toEqual(["solved", "solved", "solved"]);
  await page.getByRole("tab", { name: "Tokens" }).click();
  // Far fewer tokens than bytes: BPE, not one token per byte.
  const counts = await page.getByTestId("token-counts").textContent();
  const total = Number(/^(\d+) tokens/.exec(counts ?? "")?.[1]);
  expect(total).toBeGreaterThan(100);
  expect(total).toBeLessThan(2000);
  // The chips are Qwen3's tokens, named in its vocabulary (a whole word), not bytes nor `#id`.
  const view = page.getByTestId("token-view");
  await expect(view.locator(".tk-chip", { hasText: /^system$/ }).first()).toBeVisible();
  await expect(view.locator(".tk-chip", { hasText: /^#\d+$/ })).toHaveCount(0);
  // The template check uses the tokenizer the run loaded: no "load the tokenizer" step.
  const check = page.getByTestId("token-check");
  await expect(check).toHaveAttribute("data-state", "consistent");
  await expect(check).toContainText("builtin:tiny-qwen3");
  await expect(page.getByTestId("run-summary-drift")).toHaveText("0 of 3 drift from the chat template");
});
