import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, test } from "./fixtures.js";

/**
 * Every dump format the lab reads opens in the page as a run (issue 19 item 1; NeMo RL, verl and TRL have their own
 * tests in dump-import.spec.ts): the format found from the content, the turns with their roles, the ending, and the
 * fields the lab has no place for kept with the sample; each run's filter works on its own fields.
 */

const fixtures = join(import.meta.dirname, "..", "src", "scenario", "imports", "fixtures");

const CASES = [
  { file: "rollouts.jsonl", format: "nemo-gym", rows: 2, task: "weather_simple_agent", text: "sunny, 21°C", kept: "_ng_task_index", filter: ["_ng_task_index == 1", 1] },
  { file: "rollouts_failures.jsonl", format: "nemo-gym", rows: 1, task: "remote_agent", text: "Weather in Rome?", kept: "_ng_failure_class", filter: ['termination == "error"', 1] },
  { file: "traces.jsonl", format: "verifiers", rows: 2, task: "math", text: "2+2?", kept: "errors", filter: ["reward > 1", 1] },
  { file: "results.jsonl", format: "verifiers", rows: 2, task: "verifiers", text: "Higher.", kept: "stop_condition", filter: ["correct", 1] },
  { file: "skyrl_eval.jsonl", format: "skyrl", rows: 2, task: "gsm8k", text: "What is 6*7?", kept: "env_extras", filter: ['stop_reason == "length"', 1] },
  { file: "val_data_step3.jsonl", format: "nemo-rl", rows: 2, task: "nemo_rl", text: "Environment: correct", kept: "step", filter: ["reward == 0", 1] },
] as const;

for (const c of CASES) {
  test(`${c.file} (${c.format}) opens as a run and filters on its own fields`, async ({ page }) => {
    await page.goto("/");
    await page.getByLabel("Import JSONL").setInputFiles({ name: c.file, mimeType: "application/x-ndjson", buffer: await readFile(join(fixtures, c.file)) });
    await expect(page.getByTestId("sample-row")).toHaveCount(c.rows, { timeout: 30_000 });
    await expect(page.getByTestId("sample-task")).toHaveText(c.task);
    await expect(page.getByTestId("transcript")).toContainText(c.text);
    const fields = page.getByTestId("imported-fields");
    await expect(fields.locator("summary")).toContainText(`Imported from ${c.format}`);
    await fields.locator("summary").click();
    await expect(fields.locator("pre")).toContainText(`"${c.kept}"`);
    await page.getByTestId("sample-filter").fill(c.filter[0]);
    await expect(page.getByTestId("sample-row")).toHaveCount(c.filter[1]);
  });
}
