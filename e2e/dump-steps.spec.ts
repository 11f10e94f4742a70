import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, test } from "./fixtures.js";

/**
 * Several files of one run opened together in the page (issue 19 item 4): NeMo RL's step files make one run whose
 * step selector shows a step's samples (through the filter expression, which says so); files without a step
 * (NeMo Gym's rollouts and their failures) are selected by file; a broken line is named with its file.
 */

const fixtures = join(import.meta.dirname, "..", "src", "scenario", "imports", "fixtures");
const dump = async (name: string, as = name) => ({ name: as, mimeType: "application/x-ndjson", buffer: await readFile(join(fixtures, name)) });

test("NeMo RL step files open as one run with a step selector", async ({ page }) => {
  await page.goto("/");
  // Picked out of order: read in their steps' order (step 3 before step 12).
  await page.getByLabel("Import JSONL").setInputFiles([await dump("train_data_step3.jsonl", "train_data_step12.jsonl"), await dump("train_data_step3.jsonl")]);
  await expect(page.getByTestId("sample-row")).toHaveCount(4, { timeout: 30_000 });
  const select = page.getByLabel("Show the samples of step");
  await expect(select.locator("option")).toHaveText(["all 2 steps (4 samples)", "step 3 (2)", "step 12 (2)"]);
  await select.selectOption({ label: "step 12 (2)" });
  await expect(page.getByTestId("sample-filter")).toHaveValue("step == 12");
  await expect(page.getByTestId("sample-row")).toHaveCount(2);
  await page.getByTestId("sample-row").first().click();
  await page.getByTestId("imported-fields").locator("summary").click();
  await expect(page.getByTestId("imported-fields").locator("pre")).toContainText('"file": "train_data_step12.jsonl"');
  await select.selectOption({ label: "all 2 steps (4 samples)" });
  await expect(page.getByTestId("sample-row")).toHaveCount(4);
});

test("files without steps are selected by file; a broken line is named with its file", async ({ page }) => {
  await page.goto("/");
  const broken = { name: "rollouts_more.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.concat([await readFile(join(fixtures, "rollouts.jsonl")), Buffer.from("{not json\n")]) };
  await page.getByLabel("Import JSONL").setInputFiles([await dump("rollouts.jsonl"), broken]);
  await expect(page.getByTestId("import-problem")).toHaveText(/^rollouts_more\.jsonl line \d+: not valid JSON/, { timeout: 30_000 });
  await page.getByTestId("import-valid-anyway").click();
  const select = page.getByLabel("Show the samples of file");
  // Each file with its samples (in the order the files were read: their names' order).
  await expect(select.locator("option")).toHaveText(["all 2 files (4 samples)", "file rollouts_more.jsonl (2)", "file rollouts.jsonl (2)"]);
  const all = await page.getByTestId("sample-row").count();
  await select.selectOption({ label: "file rollouts_more.jsonl (2)" });
  await expect(page.getByTestId("sample-filter")).toHaveValue('file == "rollouts_more.jsonl"');
  await expect(page.getByTestId("sample-row")).toHaveCount(all / 2);
});
