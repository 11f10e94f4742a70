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
