import { cpSync, mkdtempSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "./fixtures.js";
import { startStandInHub } from "./stand-in-hub.js";

/**
 * A dump's token ids read with the tokenizer they were made with, chosen in the page (issue 19 item 2): a NeMo RL
 * training dump of Qwen3 ids (src/scenario/imports/fixtures/make_token_fixture.ts) opens read as bytes; with
 * `builtin:tiny-qwen3` (or a picked folder of Qwen3's tokenizer files) chosen, its chips are Qwen3's tokens, and
 * the template check and the batch's drift count use Qwen3's chat template, as `npm run tokens -- check` does.
 */

const fixtures = join(import.meta.dirname, "..", "src", "scenario", "imports", "fixtures");
const qwen3Folder = join(import.meta.dirname, "..", "public", "models", "builtin", "tiny-qwen3");

async function openDump(page: import("@playwright/test").Page) {
  await page.goto("/");
  const buffer = await readFile(join(fixtures, "train_data_step7.jsonl"));
  await page.getByLabel("Import JSONL").setInputFiles({ name: "train_data_step7.jsonl", mimeType: "application/x-ndjson", buffer });
  await expect(page.getByTestId("sample-row")).toHaveCount(2, { timeout: 30_000 });
  await page.getByRole("tab", { name: "Tokens" }).click();
}

test("a dump's Qwen3 ids are named, checked and counted with the tokenizer chosen for the run", async ({ page }) => {
  test.setTimeout(120_000);
  await openDump(page);
  const view = page.getByTestId("token-view");
  await expect(page.getByTestId("run-tokenizer")).toContainText("This run names no tokenizer");
  await page.getByLabel("Run tokenizer", { exact: true }).fill("builtin:tiny-qwen3");
  await page.getByTestId("run-tokenizer-load").click();
  await expect(page.getByTestId("run-tokenizer-chosen")).toHaveText("builtin:tiny-qwen3", { timeout: 60_000 });
  // Qwen3's tokens: its special tokens and whole words, no `#id` left.
  await expect(view.locator(".tk-chip", { hasText: /^·calculator$/ }).first()).toBeVisible();
  await expect(view.locator(".tk-chip", { hasText: /^#\d+$/ })).toHaveCount(0);
  const check = page.getByTestId("token-check");
  await expect(check).toHaveAttribute("data-state", "consistent");
  await expect(check).toContainText("builtin:tiny-qwen3");
  await expect(page.getByTestId("run-summary-drift")).toHaveText("1 of 2 drift from the chat template");
  // The second sample's generation was split character by character: it drifts where it starts, as the CLI says.
  await page.getByTestId("sample-row").nth(1).click();
  await expect(check).toHaveAttribute("data-state", "drift");
  await expect(check).toHaveAttribute("data-reason", "retokenized");
  await expect(page.getByTestId("token-check-index")).toHaveText("token #17");
  // Back to bytes: the run's own reading again.
  await page.getByRole("button", { name: "read them as bytes again" }).click();
  await expect(page.getByTestId("run-tokenizer")).toContainText("This run names no tokenizer");
});

test("the tokenizer can be a picked folder of tokenizer files; a name that is none is said so, and nothing loads", async ({ page }) => {
  test.setTimeout(120_000);
  await openDump(page);
  await page.getByLabel("Run tokenizer", { exact: true }).fill("builtin:nope");
  await expect(page.getByTestId("run-tokenizer-invalid")).toContainText("unknown built-in model 'builtin:nope'");
  await expect(page.getByTestId("run-tokenizer-load")).toBeDisabled();
  // Only the tokenizer's files: no weights are needed.
  const folder = join(mkdtempSync(join(tmpdir(), "qwen3-tokenizer-")), "qwen3-tokenizer");
  for (const file of ["tokenizer.json", "tokenizer_config.json", "config.json"]) cpSync(join(qwen3Folder, file), join(folder, file));
  await page.getByLabel("Run tokenizer folder").setInputFiles(folder);
  await expect(page.getByTestId("run-tokenizer-chosen")).toHaveText("local:qwen3-tokenizer", { timeout: 60_000 });
  await expect(page.getByTestId("token-check")).toHaveAttribute("data-state", "consistent");
  await expect(page.getByTestId("token-view").locator(".tk-chip", { hasText: /^·calculator$/ }).first()).toBeVisible();
});

test("a hub id loads its tokenizer files from the set-up's hub, and only once Load is pressed", async ({ page, guard }) => {
  test.setTimeout(120_000);
  const hub = await startStandInHub("stand-in/qwen3", qwen3Folder);
  try {
    guard.allow(hub.origin);
    await page.goto("/");
    await page.getByLabel("Hub address").fill(`${hub.origin}/`);
    const buffer = await readFile(join(fixtures, "train_data_step7.jsonl"));
    await page.getByLabel("Import JSONL").setInputFiles({ name: "train_data_step7.jsonl", mimeType: "application/x-ndjson", buffer });
    await expect(page.getByTestId("sample-row")).toHaveCount(2, { timeout: 30_000 });
    await page.getByRole("tab", { name: "Tokens" }).click();
    await page.getByLabel("Run tokenizer", { exact: true }).fill("stand-in/qwen3");
    const load = page.getByTestId("run-tokenizer-load");
    await expect(load).toHaveText(`load from ${new URL(hub.origin).host}`);
    expect(hub.requested).toEqual([]);
    await load.click();
    await expect(page.getByTestId("run-tokenizer-chosen")).toHaveText("stand-in/qwen3", { timeout: 60_000 });
    await expect(page.getByTestId("token-check")).toHaveAttribute("data-state", "consistent");
    // Its tokenizer files, not the model's weights.
    expect(hub.requested).toContain("/stand-in/qwen3/resolve/main/tokenizer.json");
    expect(hub.requested.some((p) => p.includes("onnx"))).toBe(false);
  } finally {
    hub.server.close();
  }
});
