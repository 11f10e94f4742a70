/**
 * Importing a JSONL file with bad lines: the page shows the first problems with their line numbers and field paths
 * and imports nothing; "Import the N valid lines" imports the rest. A clean file imports at once, as before. The
 * same in the comparison view's "Add a JSONL file", and for runs kept in this browser whose stored JSONL is damaged
 * (a saved run reopened, a recovered checkpoint): "Open the N valid lines".
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

test("an imported file's numbers export as they were read (log-probabilities not rounded to float32); a token id outside int32 is a problem of its line", async ({ page }) => {
  await page.goto("/");
  const exact = {
    idx: 0,
    task_name: "t",
    message_log: [
      { role: "user", content: "q", token_ids: [1, 2147483647] },
      { role: "assistant", content: "a", token_ids: [5, 6, 7], generation_logprobs: [-0.1, -1 / 3, Math.fround(-0.5)] },
    ],
    total_reward: 0,
    termination: "terminated",
  };
  await importFile(page, "exact.jsonl", [JSON.stringify(exact), footer].join("\n"));
  await expect(page.getByTestId("keep-message")).toContainText("imported exact.jsonl");
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export JSONL" }).click();
  const exported = JSON.parse(readFileSync((await (await download).path())!, "utf8").split("\n")[0]!) as typeof exact;
  expect(exported.message_log.map((m) => [m.token_ids, "generation_logprobs" in m ? m.generation_logprobs : null])).toEqual([
    [[1, 2147483647], null],
    [[5, 6, 7], [-0.1, -1 / 3, -0.5]],
  ]);

  const wide = { ...exact, message_log: [{ role: "user", content: "q", token_ids: [1, 3000000000] }] };
  await importFile(page, "wide.jsonl", [JSON.stringify(wide), footer].join("\n"));
  await expect(page.getByTestId("import-problem")).toHaveText(["line 1: message_log[0].token_ids[1]: expected a token id (an integer from 0 to 2147483647)"]);
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

/** The one saved run's record in this browser's IndexedDB, its JSONL changed by `damage` (as storage might). */
const damageSavedRun = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<string>((resolve, reject) => {
        const open = indexedDB.open("rollout-lab", 1);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const all = db.transaction("runs").objectStore("runs").getAll();
          all.onsuccess = async () => {
            const [run] = all.result as { id: string; title: string; jsonl: string | Blob }[];
            const text = typeof run!.jsonl === "string" ? run!.jsonl : await run!.jsonl.text();
            const lines = text.trimEnd().split("\n");
            // One corrupted line (a wrong type), and the last line cut short.
            const second = JSON.parse(lines[1]!);
            second.message_log[0].content = 5;
            lines[1] = JSON.stringify(second);
            lines[lines.length - 1] = lines.at(-1)!.slice(0, 25);
            const put = db.transaction("runs", "readwrite").objectStore("runs").put({ ...run, jsonl: new Blob([lines.join("\n")]) });
            put.onsuccess = () => {
              db.close();
              resolve(run!.title);
            };
            put.onerror = () => reject(put.error);
          };
        };
      }),
  );

test("a saved run whose stored JSONL is damaged: reopening shows its problems and opens its valid lines only on request", async ({ page }) => {
  await page.goto("/");
  await importFile(page, "good.jsonl", [sample(0, "the first answer"), sample(1, "the second answer"), sample(2, "the third answer"), footer].join("\n"));
  await expect(page.getByTestId("keep-message")).toHaveText("imported good.jsonl: 3 samples");
  const saved = page.getByTestId("saved-runs");
  await page.getByText(/Saved runs/).click();
  await expect(saved.getByRole("button")).toHaveCount(3); // the run, its rename and its delete buttons

  // Clean, it opens at once, as before.
  await page.reload();
  await page.getByText(/Saved runs/).click();
  await saved.getByRole("button").first().click();
  await expect(page.getByTestId("sample-row")).toHaveCount(3);
  await expect(page.getByTestId("import-problems")).toHaveCount(0);

  const title = await damageSavedRun(page);
  await page.reload();
  await page.getByText(/Saved runs/).click();
  await saved.getByRole("button", { name: title, exact: true }).click();
  const problems = page.getByTestId("import-problems");
  await expect(problems).toContainText(`${title}: 2 of 4 lines have problems; 2 valid (2 samples). Nothing was opened.`);
  await expect(problems.getByTestId("import-problem")).toHaveText([
    "line 2: message_log[0].content: expected a string",
    /^line 4: truncated: the file ends inside this line/,
  ]);
  await expect(page.getByTestId("sample-row")).toHaveCount(0);

  await problems.getByRole("button", { name: "Open the 2 valid lines" }).click();
  await expect(problems).toHaveCount(0);
  await expect(page.getByTestId("keep-message")).toHaveText(`opened ${title}: 2 samples (2 lines with problems left out)`);
  await expect(page.getByTestId("sample-row")).toHaveCount(2);
  await expect(page.getByTestId("transcript")).toContainText("the first answer");
  await page.getByTestId("sample-row").nth(1).click();
  await expect(page.getByTestId("transcript")).toContainText("the third answer");
  // Opened, not saved again: the damaged run stays as it was stored.
  await expect(saved.getByRole("button")).toHaveCount(3);
});

test("a recovered checkpoint whose stored JSONL is damaged: its problems, then its valid lines as a recovered run on request", async ({ page }) => {
  await page.goto("/");
  const underWay = (idx: number) => JSON.stringify({ ...JSON.parse(sample(idx, `answer ${idx} so far`)), termination: null });
  const jsonl = [sample(0, "the finished answer"), "{\"idx\": 1, \"task_name\": \"t\", \"message_log\": [{\"role\": \"user\", \"content\": 7}]}", underWay(2), footer.slice(0, 40)].join("\n");
  // A checkpoint as a page closed mid-run leaves it (src/app/run/checkpoints.ts), damaged.
  await page.evaluate(
    (text) =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open("rollout-lab-recovery", 1);
        open.onupgradeneeded = () => open.result.createObjectStore("checkpoints", { keyPath: "id" });
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction("checkpoints", "readwrite");
          tx.objectStore("checkpoints").put({ id: "damaged-1", startedAt: Date.now() - 5000, updatedAt: Date.now(), mode: "sync", finished: 1, total: 3, jsonl: text });
          tx.oncomplete = () => {
            open.result.close();
            resolve();
          };
          tx.onerror = () => reject(tx.error);
        };
      }),
    jsonl,
  );
  await page.reload();
  const recovered = page.getByRole("region", { name: "Recovered runs" });
  await expect(recovered.getByTestId("recovered-run")).toHaveCount(1);
  await recovered.getByRole("button", { name: "Show recovered run" }).click();
  const problems = recovered.getByTestId("import-problems");
  await expect(problems).toContainText(/^recovered · sync · 1 of 3 samples finished · .+: 2 of 4 lines have problems; 2 valid \(2 samples\)\. Nothing was opened\./);
  await expect(problems.getByTestId("import-problem")).toHaveText([
    "line 2: message_log[0].content: expected a string",
    /^line 4: truncated: the file ends inside this line/,
  ]);
  await expect(page.getByTestId("sample-row")).toHaveCount(0);

  // Declined: nothing opened, the run is still offered.
  await problems.getByTestId("import-cancel").click();
  await expect(recovered.getByTestId("recovered-run")).toHaveCount(1);
  await recovered.getByRole("button", { name: "Show recovered run" }).click();
  await recovered.getByRole("button", { name: "Open the 2 valid lines" }).click();

  await expect(page.getByTestId("recovered-run")).toHaveCount(0);
  await expect(page.getByTestId("sample-row")).toHaveCount(2);
  await expect(page.getByTestId("termination")).toHaveText([
    /^terminated by the environment/,
    "cancelled: the run ended before this sample finished: the page was closed or reloaded mid-run (recovered from this browser's storage)",
  ]);
  await page.getByText(/Saved runs/).click();
  await expect(page.getByTestId("saved-runs")).toContainText(/recovered · sync · 1 of 3 samples finished · .+ · 2 damaged lines left out/);
  // Offered once: after a reload it is a saved run, not a recovered one.
  await page.reload();
  await expect(page.getByText(/Saved runs/)).toBeVisible();
  await expect(page.getByTestId("recovered-run")).toHaveCount(0);
});

// ---------------------------------------------------------------------------------------------------------------
// A big file (over the preview's 4 MB): its checked samples are shown while it is still read, as a preview that is
// no import (a banner says so; not saved, exported or compared); the whole file checked, a clean one is imported
// (the same run, saved), one with problems waits for the user: "Don't import" (or Stop) puts back the run shown
// before, "Import the N valid lines" keeps the preview's samples.
//
// What a test sees while the file is still read, it sees with the read held: the test hook of `?faults=1`
// (`holdImport`) stops the import after its first preview slice until the test releases it, so the preview is
// looked at (or stopped) before the read ends, whatever the machine's speed.

const BIG_SAMPLES = 1200;
/** About 11 MB: each sample carries 1,500 token ids. */
function bigText(badAt: number | null = null, samples = BIG_SAMPLES): string {
  const ids = `[${Array.from({ length: 1500 }, (_, i) => (i * 7919) % 50000).join(",")}]`;
  const lines: string[] = [];
  for (let i = 0; i < samples; i++) {
    if (i === badAt) {
      lines.push(`{"idx": ${i}, "task_name": "t", "message_log": "oops"}`);
      continue;
    }
    lines.push(
      `{"idx":${i},"task_name":"t","message_log":[{"role":"user","content":"big question ${i}","token_ids":${ids}},` +
        `{"role":"assistant","content":"big answer ${i}","token_ids":[1,2,3]},{"role":"environment","content":"big reply ${i}","token_ids":[4]}],` +
        `"total_reward":${i % 3},"termination":"terminated"}`,
    );
  }
  lines.push(footer);
  return `${lines.join("\n")}\n`;
}

let tmp = "";
const bigFiles: Record<"clean" | "bad", string> = { clean: "", bad: "" };
const BAD_AT = BIG_SAMPLES - 3; // line 1,198: near the end

test.beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "rollout-lab-import-"));
  bigFiles.clean = join(tmp, "big-clean.jsonl");
  bigFiles.bad = join(tmp, "big-bad.jsonl");
  writeFileSync(bigFiles.clean, bigText());
  writeFileSync(bigFiles.bad, bigText(BAD_AT));
});
test.afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type ImportHook = { holdImport(on?: boolean): Promise<string | null>; releaseImport(): Promise<string | null> };
/** The test hook (`?faults=1`): from now on each big file's import waits after its first preview slice. */
const holdImport = (page: Page) => page.evaluate(() => (window as unknown as { __rolloutLabFaults: ImportHook }).__rolloutLabFaults.holdImport(true));
/** Lets the held import read on: "released", or null when none was held. */
const releaseImport = (page: Page) => page.evaluate(() => (window as unknown as { __rolloutLabFaults: ImportHook }).__rolloutLabFaults.releaseImport());

const row = (page: Page, n: number) => page.locator(`[data-testid="sample-row"][data-sample="${n}"]`);
const reading = (page: Page) => page.locator('[data-testid="preview-banner"][data-phase="reading"]');

/** `file` is imported with its read held after the first preview slice: its first rows are shown, as a preview. */
async function importHeld(page: Page, file: string) {
  expect(await holdImport(page)).toBe("holding");
  await page.getByLabel("Import JSONL").setInputFiles(file);
  await expect(reading(page)).toBeVisible({ timeout: 60_000 });
  await expect(row(page, 0)).toBeVisible();
}

test("a big file shows its first rows while it is still read (a preview, with its banner); clean, it ends imported and saved", async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto("/?faults=1");
  await importHeld(page, bigFiles.clean);
  // Shown before the read was over (it is held): fewer samples than the file has.
  const samples = Number(await reading(page).getAttribute("data-samples"));
  expect(samples).toBeGreaterThan(0);
  expect(samples).toBeLessThan(BIG_SAMPLES);
  await expect(reading(page)).toContainText("Preview of big-clean.jsonl, still being read");
  await expect(reading(page)).toContainText("Nothing is imported until the whole file is checked");
  // A preview is no run yet: not exported, not compared, not finished (so not saved).
  await expect(page.getByRole("button", { name: "Export JSONL" })).toBeDisabled();
  await expect(page.getByRole("tab", { name: "Compare" })).toBeDisabled();
  await expect(page.getByTestId("run-status")).toHaveText("idle");
  await expect(page.getByTestId("keep-message")).toHaveCount(0);

  expect(await releaseImport(page)).toBe("released");
  await expect(page.getByTestId("keep-message")).toHaveText(`imported big-clean.jsonl: ${BIG_SAMPLES} samples`, { timeout: 90_000 });
  await expect(page.getByTestId("preview-banner")).toHaveCount(0);
  await expect(page.getByTestId("run-status")).toHaveText("finished");
  await expect(page.getByRole("button", { name: "Export JSONL" })).toBeEnabled();
  await expect(page.getByRole("tab", { name: "Compare" })).toBeEnabled();
  await expect(page.getByText("Saved runs (1)")).toBeVisible({ timeout: 60_000 });
  await row(page, 2).click();
  await expect(page.getByTestId("transcript")).toContainText("big answer 2");
});

test("a big file with a bad line near the end: its problems once read; Don't import puts back the run shown before", async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto("/");
  await importFile(page, "good.jsonl", [sample(0, "kept answer"), sample(1, "another kept answer"), footer].join("\n"));
  await expect(page.getByTestId("keep-message")).toHaveText("imported good.jsonl: 2 samples");
  await expect(page.getByText("Saved runs (1)")).toBeVisible({ timeout: 30_000 });
  await row(page, 1).click();
  await expect(page.getByTestId("transcript")).toContainText("another kept answer");

  await page.getByLabel("Import JSONL").setInputFiles(bigFiles.bad);
  const problems = page.getByTestId("import-problems");
  await expect(problems).toBeVisible({ timeout: 90_000 });
  await expect(problems.getByTestId("import-problem")).toHaveText([`line ${BAD_AT + 1}: message_log: expected a list of messages`]);
  const n = (x: number) => x.toLocaleString("en");
  await expect(problems).toContainText(
    `big-bad.jsonl: 1 of ${n(BIG_SAMPLES + 1)} lines has a problem; ${n(BIG_SAMPLES)} valid (${n(BIG_SAMPLES - 1)} samples). Nothing was imported (the samples shown are a preview).`,
  );
  // The preview is still shown (its samples, the banner), and is no import.
  const banner = page.getByTestId("preview-banner");
  await expect(banner).toHaveAttribute("data-phase", "problems");
  await expect(banner).toContainText("1 line has a problem");
  await expect(page.getByTestId("transcript")).toContainText("big answer 0");
  await expect(page.getByTestId("run-status")).toHaveText("idle");
  await expect(page.getByRole("button", { name: "Export JSONL" })).toBeDisabled();

  await problems.getByRole("button", { name: "Don't import" }).click();
  await expect(problems).toHaveCount(0);
  await expect(banner).toHaveCount(0);
  // The run shown before, as it was: its samples, its selection, finished.
  await expect(page.getByTestId("sample-row")).toHaveCount(2);
  await expect(page.getByRole("tab", { name: "Transcript · sample 1" })).toBeVisible();
  await expect(page.getByTestId("transcript")).toContainText("another kept answer");
  await expect(page.getByTestId("run-status")).toHaveText("finished");
  await row(page, 0).click();
  await expect(page.getByTestId("transcript")).toContainText("kept answer");
  await expect(page.getByText("Saved runs (1)")).toBeVisible();
});

test("a big file with a bad line: Import the valid lines keeps the preview's samples (the same run, the selection kept)", async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto("/?faults=1");
  // A sample chosen while the file is still read (held), in the preview.
  await importHeld(page, bigFiles.bad);
  await row(page, 5).click();
  await expect(page.getByTestId("transcript")).toContainText("big answer 5");
  await expect(reading(page)).toBeVisible();

  expect(await releaseImport(page)).toBe("released");
  const problems = page.getByTestId("import-problems");
  await expect(problems).toBeVisible({ timeout: 90_000 });
  await expect(page.getByTestId("preview-banner")).toHaveAttribute("data-phase", "problems");
  await expect(page.getByRole("tab", { name: "Transcript · sample 5" })).toBeVisible();

  await problems.getByRole("button", { name: `Import the ${BIG_SAMPLES.toLocaleString("en")} valid lines` }).click();
  await expect(page.getByTestId("keep-message")).toHaveText(`imported big-bad.jsonl: ${BIG_SAMPLES - 1} samples (1 line with problems left out)`);
  await expect(page.getByTestId("preview-banner")).toHaveCount(0);
  await expect(page.getByTestId("run-status")).toHaveText("finished");
  // Not rebuilt: the sample chosen in the preview is still the one shown.
  await expect(page.getByRole("tab", { name: "Transcript · sample 5" })).toBeVisible();
  await expect(page.getByTestId("transcript")).toContainText("big answer 5");
  await expect(page.getByText("Saved runs (1)")).toBeVisible({ timeout: 60_000 });
});

test("Stop while a big file is read: the preview goes, the run shown before comes back", async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto("/?faults=1");
  await importFile(page, "good.jsonl", [sample(0, "kept answer"), sample(1, "another"), footer].join("\n"));
  await expect(page.getByTestId("keep-message")).toHaveText("imported good.jsonl: 2 samples");
  // Stopped while the read is held: surely before its end.
  await importHeld(page, bigFiles.clean);
  await page.getByTestId("preview-stop").click();
  await expect(page.getByTestId("keep-message")).toHaveText("stopped reading big-clean.jsonl");
  await expect(page.getByTestId("preview-banner")).toHaveCount(0);
  await expect(page.getByTestId("sample-row")).toHaveCount(2);
  await expect(page.getByTestId("transcript")).toContainText("kept answer");
  await expect(page.getByTestId("run-status")).toHaveText("finished");
  // The stopped read is held no more: nothing of it comes back.
  expect(await releaseImport(page)).toBeNull();
  await expect(page.getByTestId("sample-row")).toHaveCount(2);
  await expect(page.getByTestId("keep-message")).toHaveText("stopped reading big-clean.jsonl");
});
