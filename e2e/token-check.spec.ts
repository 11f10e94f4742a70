import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import type { Page } from "@playwright/test";
import { expect, setScenario, test } from "./fixtures.js";

/**
 * The token consistency check in the page (issue 17 item 7): the Tokens view's verdict on the selected sample (the
 * same check as `npm run tokens -- check`), the first divergence marked among the chips, the batch summary's count
 * of drifting samples and its "only drifting samples" filter, and a real vocabulary checked in the rollout worker
 * with the model's own tokenizer.
 */

async function workspace(envelope: "fork" | "template") {
  const scenario = JSON.parse(await readFile("src/scenario/examples/workspace-structured.json", "utf8")) as { structured: Record<string, unknown> };
  scenario.structured.envelope = envelope;
  return scenario;
}

async function run(page: Page, scenario: object, timeout = 60_000) {
  await page.goto("/");
  await setScenario(page, JSON.stringify(scenario));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout });
}

async function openTokens(page: Page) {
  await page.getByRole("tab", { name: "Tokens" }).click();
  await expect(page.getByTestId("token-view")).toBeVisible();
}

test("a structured workspace run in the template envelope: the Tokens tab says consistent; none drift", async ({ page }) => {
  await run(page, await workspace("template"));
  await openTokens(page);
  const check = page.getByTestId("token-check");
  await expect(check).toHaveAttribute("data-state", "consistent");
  await expect(check).toContainText("Consistent with the chat template");
  await expect(check).toContainText("byte-level (ChatML)");
  await expect(page.locator('.tk-chip[data-divergence]')).toHaveCount(0);
  await expect(page.getByTestId("run-summary-drift")).toHaveText("0 of 3 drift from the chat template");
  await page.getByTestId("only-drifting").check();
  await expect(page.getByTestId("sample-row")).toHaveCount(0);
  await expect(page.getByTestId("no-drifting")).toBeVisible();
});

test("the fork envelope drifts: the first divergence with its token index and reason, marked among the chips; the batch counts and filters", async ({ page }) => {
  await run(page, await workspace("fork"));
  await openTokens(page);
  const check = page.getByTestId("token-check");
  await expect(check).toHaveAttribute("data-state", "drift");
  await expect(check).toHaveAttribute("data-reason", "observation_envelope");
  const index = Number(await check.getAttribute("data-token-index"));
  expect(index).toBeGreaterThan(0);
  await expect(page.getByTestId("token-check-index")).toHaveText(`token #${index}`);
  await expect(page.getByTestId("token-check-reason")).toContainText("an observation outside the template's envelope");
  await expect(check).toContainText("(message 2, ");
  // Both sides' tokens as text: ours starts on <|im_start|>, the template's on the newline it writes first.
  await expect(page.getByTestId("token-check-ours").locator(".tk-chip").first()).toHaveText("<|im_start|>");
  await expect(page.getByTestId("token-check-template").locator(".tk-chip").first()).toHaveText("↵");
  // The chip at the divergence: marked, scrolled to and focused when asked.
  await page.getByTestId("token-check-reveal").click();
  const chip = page.locator(`.tk-chip[data-pos="${index}"]`);
  await expect(chip).toHaveAttribute("data-divergence", "true");
  await expect(chip).toHaveClass(/tk-diverge/);
  await expect(chip).toBeFocused();
  await expect(chip).toBeInViewport();
  await expect(page.locator(".tk-chip[data-divergence]")).toHaveCount(1);
  // The text diff is still there, under the verdict, on the check's reference.
  await page.getByTestId("template-comparison").locator("summary").click();
  await expect(page.getByTestId("template-verdict")).toBeVisible();

  await expect(page.getByTestId("run-summary-drift")).toHaveText("3 of 3 drift from the chat template");
  await expect(page.getByTestId("sample-row")).toHaveCount(3);
  await page.getByTestId("only-drifting").check();
  await expect(page.getByTestId("sample-row")).toHaveCount(3);
});

test("only drifting samples: a mixed run shows only the drifting rows, and j/k move among them", async ({ page }) => {
  // The scripted calculator in the template envelope: samples 1 and 3 have a stripped prompt (no newline after
  // the assistant header: generation_prompt), samples 0 and 2 are consistent.
  const calculator = JSON.parse(await readFile("src/scenario/examples/calculator-scripted.json", "utf8")) as {
    samples: { message_log: { content: string }[] }[];
    policy: { responses: string[][] };
  };
  const datum = calculator.samples[0]!;
  const stripped = structuredClone(datum);
  stripped.message_log[0]!.content = stripped.message_log[0]!.content.replace(/\n$/, "");
  const scenario = {
    ...calculator,
    samples: [datum, stripped, datum, stripped],
    policy: { ...calculator.policy, responses: Array.from({ length: 4 }, () => calculator.policy.responses[0]!) },
    structured: { enabled: true, envelope: "template" },
  };
  await run(page, scenario);
  await expect(page.getByTestId("run-summary-drift")).toHaveText("2 of 4 drift from the chat template");
  await expect(page.getByTestId("sample-row")).toHaveCount(4);
  await page.getByTestId("only-drifting").check();
  await expect(page.getByTestId("sample-row")).toHaveCount(2);
  const shown = await page.getByTestId("sample-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-sample")));
  expect(shown).toEqual(["1", "3"]);
  const selected = page.locator('[data-testid="sample-row"][aria-selected="true"]');
  await page.locator('[data-testid="sample-row"][data-sample="1"]').click();
  await expect(selected).toHaveAttribute("data-sample", "1");
  await page.keyboard.press("j");
  await expect(selected).toHaveAttribute("data-sample", "3");
  await page.keyboard.press("k");
  await expect(selected).toHaveAttribute("data-sample", "1");
  await openTokens(page);
  await expect(page.getByTestId("token-check")).toHaveAttribute("data-reason", "generation_prompt");
  // Off again: every row, and j moves to the next sample.
  await page.getByTestId("only-drifting").uncheck();
  await expect(page.getByTestId("sample-row")).toHaveCount(4);
  await page.locator('[data-testid="sample-row"][data-sample="1"]').click();
  await page.keyboard.press("j");
  await expect(selected).toHaveAttribute("data-sample", "2");
});

test("a builtin:tiny-qwen3 run: checked in the worker with Qwen3's tokenizer; exported and imported, its tokenizer loads alone; the CLI agrees", async ({ page }) => {
  test.setTimeout(240_000);
  const scenario = {
    mode: "sync",
    max_seq_len: 2048,
    max_rollout_turns: 1,
    max_new_tokens: 8,
    greedy: true,
    envs: { sliding_puzzle_game: { env: "sliding_puzzle", config: {} } },
    dataset: { task_name: "sliding_puzzle_game", size: 1, seed: 4, config: { size: 2, shuffle_moves: 3, max_moves: 5 } },
    policy: { kind: "model", model: "builtin:tiny-qwen3", device: "wasm" },
  };
  await run(page, scenario, 180_000);
  await openTokens(page);
  const check = page.getByTestId("token-check");
  await expect(check).toHaveAttribute("data-state", /^(consistent|drift)$/, { timeout: 30_000 });
  await expect(check).toContainText("tokenizer builtin:tiny-qwen3");
  await expect(page.getByTestId("run-summary-drift")).toHaveText(/^[01] of 1 drift from the chat template$/);
  const verdict = await check.getAttribute("data-state");

  // The same run exported and imported into a fresh page: no model is loaded, so the check says what it needs and
  // loads the tokenizer alone on asking; the verdict is the live run's.
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export JSONL" }).click();
  const exported = (await (await download).path())!;
  await page.goto("/");
  await page.getByLabel("Import JSONL").setInputFiles({ name: "qwen3-run.jsonl", mimeType: "application/x-ndjson", buffer: await readFile(exported) });
  await expect(page.getByTestId("sample-row")).toHaveCount(1, { timeout: 30_000 });
  await expect(page.getByTestId("run-summary-drift")).toHaveAttribute("data-state", "needs_model");
  await openTokens(page);
  await expect(check).toHaveAttribute("data-state", "needs_model");
  await expect(check).toContainText("needs the tokenizer of builtin:tiny-qwen3");
  await page.getByTestId("token-check-load").click();
  await expect(check).toHaveAttribute("data-state", verdict!, { timeout: 60_000 });
  await expect(check).toContainText("tokenizer builtin:tiny-qwen3");
  await expect(page.getByTestId("run-summary-drift")).toHaveText(/^[01] of 1 drift from the chat template$/);

  // The CLI on the exported file (the same model's tokenizer, from its package) gives the same verdict and place.
  const cli = await promisify(execFile)("npx", ["tsx", "src/cli/tokens.ts", "check", exported, "--json"]).catch((e: { stdout: string }) => e);
  const report = JSON.parse(cli.stdout) as { samples: { consistent: boolean; first_divergence: { token_index: number } | null }[]; summary: { tokenizer: string } };
  expect(report.summary.tokenizer).toBe("builtin:tiny-qwen3");
  expect(report.samples[0]!.consistent ? "consistent" : "drift").toBe(verdict);
  if (report.samples[0]!.first_divergence) await expect(check).toHaveAttribute("data-token-index", String(report.samples[0]!.first_divergence.token_index));
});
