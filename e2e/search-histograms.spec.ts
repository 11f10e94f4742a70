import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, test } from "./fixtures.js";

/** The run's full-text search and the histograms whose bars filter the overview (issue 19 item 4). */

const fixtures = join(import.meta.dirname, "..", "src", "scenario", "imports", "fixtures");
const rows = (page: import("@playwright/test").Page) => page.getByTestId("sample-row");

test("search lists its hits with counts; a hit selects its sample; a histogram bar sets and clears the filter", async ({ page }) => {
  await page.goto("/");
  await page.getByLabel("Import JSONL").setInputFiles({ name: "5.jsonl", mimeType: "application/x-ndjson", buffer: await readFile(join(fixtures, "5.jsonl")) });
  await expect(rows(page)).toHaveCount(2, { timeout: 30_000 });

  await page.getByTestId("run-search-input").fill("BOXED{5}");
  const count = page.getByTestId("run-search-count");
  await expect(count).toHaveText(/^\s*1 hit in 1 sample$/);
  const hit = page.getByTestId("run-search-hit").first();
  await expect(hit.locator("mark")).toHaveText("boxed{5}");
  await hit.click();
  // Sample 0 is selected on opening: the hit is in sample 1 alone, and its transcript marks the match.
  await expect(page.locator('[data-testid="sample-row"][aria-selected="true"]')).toHaveAttribute("data-sample", "1");
  await expect(page.getByTestId("transcript").getByTestId("transcript-search-hit")).toHaveText(["boxed{5}"]);
  // A regular expression marks every match; an empty search marks none.
  await page.getByTestId("run-search-input").fill("/\\d/");
  await expect(page.getByTestId("transcript").getByTestId("transcript-search-hit").first()).toBeVisible();
  await page.getByTestId("run-search-input").fill("");
  await expect(page.getByTestId("transcript").getByTestId("transcript-search-hit")).toHaveCount(0);

  await page.getByTestId("histograms").locator("summary").click();
  const bar = page.getByRole("button", { name: /^reward .*: 1 samples$/ }).first();
  await bar.click();
  await expect(rows(page)).toHaveCount(1);
  await expect(page.getByTestId("sample-filter")).toHaveValue(/^reward >= /);
  await bar.click();
  await expect(rows(page)).toHaveCount(2);
  await expect(page.getByTestId("sample-filter")).toHaveValue("");
});
