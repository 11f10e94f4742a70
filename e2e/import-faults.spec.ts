/**
 * Importing a JSONL file with bad lines: the page shows the first problems with their line numbers and field paths
 * and imports nothing; "Import the N valid lines" imports the rest. A clean file imports at once, as before. The
 * same in the comparison view's "Add a JSONL file".
 */

import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.js";

const sample = (idx: number, answer: string) =>
  JSON.stringify({
    idx,
    task_name: "t",
    message_log: [
      { role: "user", content: `question ${idx}` },
      { role: "assistant", content: answer },
      { role: "environment", content: `reply ${idx}` },
    ],
    total_reward: idx,
    termination: "terminated",
  });

const footer = JSON.stringify({ "lab/format": "rollout-lab-run/1", mode: "sync", max_rollout_turns: 2, max_seq_len: 256, partial: false, metrics: {}, scenario: null });

/** Two good samples, a wrong type on line 2, a line that is not JSON on line 3, a truncated last line. */
const BAD = [
  sample(0, "the first answer"),
  JSON.stringify({ idx: 1, task_name: "t", message_log: [{ role: "user", content: 5 }] }),
  "this is not JSON",
  sample(3, "the fourth answer"),
  footer,
  '{"idx": 5, "task_name": "t", "mess',
].join("\n");

const file = (name: string, text: string) => ({ name, mimeType: "application/x-ndjson", buffer: Buffer.from(text) });

async function importFile(page: Page, name: string, text: string) {
  await page.getByLabel("Import JSONL").setInputFiles(file(name, text));
}

test("a file with bad lines shows its problems and imports nothing, until the valid lines are asked for", async ({ page }) => {
  await page.goto("/");
  await importFile(page, "bad.jsonl", BAD);
  const problems = page.getByTestId("import-problems");
  await expect(problems).toBeVisible();
  await expect(problems).toContainText("bad.jsonl: 3 of 6 lines have problems; 3 valid (2 samples). Nothing was imported.");
  await expect(problems.getByTestId("import-problem")).toHaveText([
    "line 2: message_log[0].content: expected a string",
    /^line 3: not valid JSON at column 2 \(/,
    /^line 6: truncated: the file ends inside this line/,
  ]);
  // Nothing was imported: no run is shown.
  await expect(page.getByTestId("sample-row")).toHaveCount(0);
  await expect(page.getByTestId("keep-message")).toHaveCount(0);

  await page.getByTestId("import-valid-anyway").click();
  await expect(page.getByTestId("import-valid-anyway")).toHaveCount(0);
  await expect(problems).toHaveCount(0);
  await expect(page.getByTestId("keep-message")).toHaveText("imported bad.jsonl: 2 samples (3 lines with problems left out)");
  await expect(page.getByTestId("sample-row")).toHaveCount(2);
  await expect(page.getByTestId("transcript")).toContainText("the first answer");
  await page.getByTestId("sample-row").nth(1).click();
  await expect(page.getByTestId("transcript")).toContainText("the fourth answer");
});

test("declining keeps the current run; a clean file imports at once; a file with no valid sample offers no import", async ({ page }) => {
  await page.goto("/");
  await importFile(page, "good.jsonl", [sample(0, "kept answer"), sample(1, "another"), footer].join("\n"));
  await expect(page.getByTestId("keep-message")).toHaveText("imported good.jsonl: 2 samples");
  await expect(page.getByTestId("import-problems")).toHaveCount(0);
  await expect(page.getByTestId("transcript")).toContainText("kept answer");

  await importFile(page, "bad.jsonl", BAD);
  await expect(page.getByTestId("import-problems")).toBeVisible();
  await page.getByTestId("import-cancel").click();
  await expect(page.getByTestId("import-problems")).toHaveCount(0);
  await expect(page.getByTestId("transcript")).toContainText("kept answer");

  await importFile(page, "junk.jsonl", "nope\n[1]\n");
  await expect(page.getByTestId("import-problems")).toContainText("junk.jsonl: 2 of 2 lines have problems; 0 valid (0 samples)");
  await expect(page.getByTestId("import-valid-anyway")).toHaveCount(0);
  await expect(page.getByTestId("transcript")).toContainText("kept answer");
});

test("a big file with many bad lines: the first 20 problems, the count of the rest, and its valid lines on request", async ({ page }) => {
  await page.goto("/");
  const lines = Array.from({ length: 5000 }, (_, i) => (i % 10 === 9 ? `{"idx": ${i}, "task_name": "t", "message_log": "oops"}` : sample(i, `answer ${i}`)));
  await importFile(page, "big.jsonl", lines.join("\n"));
  const problems = page.getByTestId("import-problems");
  await expect(problems).toContainText("big.jsonl: 500 of 5,000 lines have problems; 4,500 valid (4,500 samples)");
  await expect(problems.getByTestId("import-problem")).toHaveCount(20);
  await expect(problems.getByTestId("import-problem").first()).toHaveText("line 10: message_log: expected a list of messages");
  await expect(problems.getByTestId("import-problem").last()).toHaveText("line 200: message_log: expected a list of messages");
  await expect(page.getByTestId("import-problems-more")).toHaveText("… and 480 more problems (500 in all)");
  await page.getByRole("button", { name: "Import the 4,500 valid lines" }).click();
  await expect(page.getByTestId("keep-message")).toHaveText("imported big.jsonl: 4500 samples (500 lines with problems left out)");
});

test("the comparison view's JSONL file: problems first, the valid lines on request", async ({ page }) => {
  await page.goto("/");
  await importFile(page, "good.jsonl", [sample(0, "current answer"), sample(1, "another"), footer].join("\n"));
  await expect(page.getByTestId("keep-message")).toHaveText("imported good.jsonl: 2 samples");
  await page.getByRole("tab", { name: "Compare" }).click();
  const view = page.getByTestId("compare-view");
  await page.getByLabel("Compare with a JSONL file").setInputFiles(file("other.jsonl", BAD));
  const problems = view.getByTestId("import-problems");
  await expect(problems).toBeVisible();
  await expect(problems.getByTestId("import-problem").first()).toHaveText("line 2: message_log[0].content: expected a string");
  await expect(page.getByTestId("compare-message")).toHaveCount(0);
  await expect(view.getByTestId("compare-label-b")).not.toContainText("other.jsonl");

  await problems.getByTestId("import-valid-anyway").click();
  await expect(page.getByTestId("compare-message")).toHaveText("added other.jsonl: 2 samples (3 lines with problems left out)");
  await expect(view.getByTestId("compare-label-b")).toContainText("file other.jsonl");
});
