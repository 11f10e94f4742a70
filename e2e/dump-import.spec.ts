import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, test } from "./fixtures.js";

/**
 * Runs from clusters in the page (issue 19): a NeMo RL train_data_step{N}.jsonl, a verl {step}.jsonl and a TRL
 * completions_{step}.parquet, picked as
 * the lab's own exports are, open as runs: the format found from the content, the turns with their roles and
 * tokens, and the fields the lab has no place for shown with the sample.
 */

const fixtures = join(import.meta.dirname, "..", "src", "scenario", "imports", "fixtures");

test("a NeMo RL training dump opens as a run: roles and tokens from its loss mask, its other fields with the sample", async ({ page }) => {
  await page.goto("/");
  await page.getByLabel("Import JSONL").setInputFiles({ name: "train_data_step3.jsonl", mimeType: "application/x-ndjson", buffer: await readFile(join(fixtures, "train_data_step3.jsonl")) });
  await expect(page.getByTestId("sample-row")).toHaveCount(2, { timeout: 30_000 });
  await expect(page.getByTestId("sample-task")).toHaveText("math_agent");
  const transcript = page.getByTestId("transcript");
  await expect(transcript).toContainText("What is 2+2?");
  await expect(transcript).toContainText("<result>4</result>");
  const fields = page.getByTestId("imported-fields");
  await expect(fields.locator("summary")).toContainText("Imported from nemo-rl: 7 more fields (step, agent_ref, input_lengths, token_loss_mask, sample_loss_mask, advantages, …)");
  await fields.locator("summary").click();
  await expect(fields.locator("pre")).toContainText('"prev_logprobs"');
  await page.getByRole("tab", { name: "Tokens" }).click();
  await expect(page.getByTestId("token-counts")).toContainText("12 tokens");
  // The trainer's log-probabilities against the engine's: per sample, with a strip of its trained tokens, and the run's.
  await expect(page.getByTestId("sample-mismatch")).toContainText("over 5 trained tokens: mean |Δ| 0.15 · max 0.5 (token #10)");
  await expect(page.getByTestId("sample-mismatch").locator(".mismatch-chip")).toHaveCount(5);
  await expect(page.getByTestId("run-mismatch")).toContainText("over 8 trained tokens of 2 samples");
  await expect(page.getByTestId("run-mismatch")).toContainText("1 with a sequence ratio outside [0.5, 2]");
  await page.getByTestId("sample-filter").fill("mismatch > 0.1");
  await expect(page.getByTestId("sample-row")).toHaveCount(1);
});

test("a verl rollout dump opens as a run: prompt and response, score as the reward, ground truth kept", async ({ page }) => {
  await page.goto("/");
  await page.getByLabel("Import JSONL").setInputFiles({ name: "5.jsonl", mimeType: "application/x-ndjson", buffer: await readFile(join(fixtures, "5.jsonl")) });
  await expect(page.getByTestId("sample-row")).toHaveCount(2, { timeout: 30_000 });
  await expect(page.getByTestId("transcript")).toContainText("2+2 is \\boxed{4}.");
  await expect(page.getByTestId("imported-fields").locator("summary")).toContainText("Imported from verl: 5 more fields (gts, step, acc, pred, uid)");
});

test("a file of no known shape: the import names its keys and what the lab reads", async ({ page, guard }) => {
  await page.goto("/");
  await page.getByLabel("Import JSONL").setInputFiles({ name: "other.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from('{"question": "q", "answer": "a"}\n') });
  await expect(page.getByText(/not a run the lab reads \(its keys: question, answer\)/)).toBeVisible({ timeout: 30_000 });
  guard.consoleErrors.length = 0;
});

test("a TRL completions_{step}.parquet opens as a run: its rows as samples, rewards summed, its columns with the sample", async ({ page }) => {
  await page.goto("/");
  await page.getByLabel("Import JSONL").setInputFiles({ name: "completions_00010.parquet", mimeType: "application/vnd.apache.parquet", buffer: await readFile(join(fixtures, "completions_00010.parquet")) });
  await expect(page.getByTestId("sample-row")).toHaveCount(4, { timeout: 30_000 });
  await expect(page.getByTestId("sample-task").first()).toHaveText("trl");
  const transcript = page.getByTestId("transcript");
  await expect(transcript).toContainText("Solve: what is 2+2?");
  await expect(transcript).toContainText("The answer is \\boxed{4}.");
  await expect(page.getByTestId("imported-fields").locator("summary")).toContainText("Imported from trl: 5 more fields (step, accuracy_reward, format_reward, parsed_answer, advantage)");
});
