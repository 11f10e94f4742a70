import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, loadPreset, test } from "./fixtures.js";

/** The batch's filter expression (issue 19 item 4): on an imported dump's fields and on the lab's own runs. */

const fixtures = join(import.meta.dirname, "..", "src", "scenario", "imports", "fixtures");
const rows = (page: import("@playwright/test").Page) => page.getByTestId("sample-row");

test("filter an imported verl dump by reward and by its own fields; an unreadable expression says where", async ({ page }) => {
  await page.goto("/");
  await page.getByLabel("Import JSONL").setInputFiles({ name: "5.jsonl", mimeType: "application/x-ndjson", buffer: await readFile(join(fixtures, "5.jsonl")) });
  await expect(rows(page)).toHaveCount(2, { timeout: 30_000 });
  const filter = page.getByTestId("sample-filter");
  await filter.fill("reward < 0.5");
  await expect(rows(page)).toHaveCount(1);
  await expect(rows(page).first()).toHaveAttribute("data-sample", "1");
  await expect(page.getByTestId("sample-filter-count")).toHaveText("1 of 2 shown");
  await filter.fill('imported.acc == true and text ~ "boxed{4}"');
  await expect(rows(page)).toHaveCount(1);
  await expect(rows(page).first()).toHaveAttribute("data-sample", "0");
  await filter.fill("rewrd < 1");
  await expect(page.getByTestId("sample-filter-error")).toContainText("unknown field 'rewrd'");
  await expect(page.getByTestId("sample-filter-error").locator("mark")).toHaveText("rewrd");
  await expect(rows(page)).toHaveCount(2);
  await filter.fill("turns > 5");
  await expect(page.getByTestId("no-match")).toBeVisible();
});

test("the same filters on the lab's own run", async ({ page }) => {
  await page.goto("/");
  await loadPreset(page, "Sliding puzzle · oracle · sync");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 60_000 });
  const total = await rows(page).count();
  const solved = await page.locator('[data-testid="sample-row"] [data-testid="outcome"]', { hasText: "solved" }).count();
  await page.getByTestId("sample-filter").fill("solved");
  await expect(rows(page)).toHaveCount(solved);
  await page.getByTestId("sample-filter").fill("not solved");
  await expect(rows(page)).toHaveCount(total - solved);
});

test("GRPO groups: a dump's uid groups its samples, side by side; a zero-variance group is counted and a click away", async ({ page }) => {
  const lines = (await readFile(join(fixtures, "5.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  // Two groups: a1b2 as written (rewards 1 and 0), and c3 whose two samples both scored 1 (no gradient).
  const dump = [...lines, { ...lines[0], uid: "c3" }, { ...lines[0], uid: "c3", output: "\\boxed{4}" }].map((l) => JSON.stringify(l)).join("\n");
  await page.goto("/");
  await page.getByLabel("Import JSONL").setInputFiles({ name: "6.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(`${dump}\n`) });
  await expect(rows(page)).toHaveCount(4, { timeout: 30_000 });
  await expect(page.getByTestId("run-groups")).toContainText("2 groups of 2 samples (by uid) · mean reward std 0.25 · 1 with zero reward variance (no gradient)");
  const panel = page.getByTestId("group-panel");
  await expect(panel.locator("summary")).toContainText("its group: 2 samples (the same uid) · mean reward 0.5 · std 0.5");
  await panel.locator("summary").click();
  await panel.locator('[data-group-sample="1"]').click();
  await expect(page.locator('[data-testid="sample-row"][aria-selected="true"]')).toHaveAttribute("data-sample", "1");
  await page.getByTestId("show-zero-variance").click();
  await expect(page.getByTestId("sample-filter")).toHaveValue("zero_variance");
  await expect(rows(page)).toHaveCount(2);
  await rows(page).first().click();
  await expect(page.getByTestId("group-panel").locator("summary")).toContainText("zero variance: no gradient");
});

test("sort the rows by a field, up or down; j / k follow the order shown", async ({ page }) => {
  await page.goto("/");
  await page.getByLabel("Import JSONL").setInputFiles({ name: "train_data_step3.jsonl", mimeType: "application/x-ndjson", buffer: await readFile(join(fixtures, "train_data_step3.jsonl")) });
  await expect(rows(page)).toHaveCount(2, { timeout: 30_000 });
  const order = () => rows(page).evaluateAll((r) => r.map((e) => e.getAttribute("data-sample")));
  await page.getByTestId("sample-sort").selectOption("tokens");
  await expect.poll(order).toEqual(["0", "1"]);
  await page.getByTestId("sample-sort-direction").click();
  await expect.poll(order).toEqual(["1", "0"]);
  // Lowest first still: the mismatch of sample 1 (0.017) before sample 0's (0.15).
  await page.getByTestId("sample-sort").selectOption("mismatch");
  await expect.poll(order).toEqual(["1", "0"]);
  await page.getByTestId("sample-sort-direction").click();
  await expect.poll(order).toEqual(["0", "1"]);
  await page.getByTestId("sample-sort-direction").click();
  await rows(page).first().click();
  await expect(page.locator('[data-testid="sample-row"][aria-selected="true"]')).toHaveAttribute("data-sample", "1");
  await page.keyboard.press("j");
  await expect(page.locator('[data-testid="sample-row"][aria-selected="true"]')).toHaveAttribute("data-sample", "0");
});
