import type { Locator, Page } from "@playwright/test";
import { expect, setScenario, test } from "./fixtures.js";

/**
 * The token view's per-token detail (issue 16): a chip pins its detail (id, text, trained or not and why, a model's
 * log-probability, entropy and alternatives), the chips are reached by keyboard with one tab stop, and the chat
 * template comparison says whether its differences touch trained tokens. Floats differ between machines: only
 * their formats and counts are checked.
 */

const puzzle = {
  envs: { sliding_puzzle_game: { env: "sliding_puzzle", config: {} } },
  dataset: { task_name: "sliding_puzzle_game", size: 2, seed: 4, config: { size: 2, shuffle_moves: 3, max_moves: 5 } },
};
const oracleScenario = { mode: "sync", max_seq_len: 4096, max_rollout_turns: 4, ...puzzle, policy: { kind: "oracle", seed: 0, error_rate: 0 } };
const modelScenario = { mode: "sync", max_seq_len: 2048, max_rollout_turns: 2, max_new_tokens: 12, greedy: false, ...puzzle, policy: { kind: "model", model: "builtin:tiny", device: "wasm", seed: 1 } };

async function runToTokens(page: Page, scenario: object) {
  await page.goto("/");
  await setScenario(page, JSON.stringify(scenario));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 60_000 });
  await page.getByRole("tab", { name: "Tokens" }).click();
  await expect(page.getByTestId("token-view")).toBeVisible();
}

const generatedChips = (page: Page) => page.locator('[data-testid="token-message"][data-kind="generated"] .tk-chip');
const promptChips = (page: Page) => page.locator('[data-testid="token-message"][data-kind="prompt"] .tk-chip');
const detail = (page: Page) => page.getByTestId("token-detail");

async function position(chip: Locator): Promise<string> {
  return (await chip.getAttribute("data-pos"))!;
}

test("oracle run: a generated token pins its id, text and trained yes, with no log-probability and no alternatives; a prompt token is not trained", async ({ page }) => {
  await runToTokens(page, oracleScenario);
  await expect(page.getByTestId("token-detail-hint")).toBeVisible();
  await expect(page.getByTestId("legend-trained")).toBeVisible();

  // The prompt (over 600 tokens) starts collapsed.
  await page.locator('[data-testid="token-message"][data-kind="prompt"]').getByRole("button", { name: /^show \d+ tokens$/ }).click();
  // Trained chips are marked, per token: every generated chip, no prompt chip.
  const generated = generatedChips(page);
  expect(await generated.count()).toBeGreaterThan(0);
  expect(await page.locator('[data-testid="token-message"][data-kind="generated"] .tk-chip:not([data-trained])').count()).toBe(0);
  await expect(generated.first()).toHaveAttribute("data-trained", "true");
  await expect(promptChips(page).first()).not.toHaveAttribute("data-trained");
  await expect(page.locator('[data-testid="token-message"]:not([data-kind="generated"]) .tk-chip[data-trained]')).toHaveCount(0);

  const chip = generated.nth(2);
  const pos = await position(chip);
  await chip.click();
  await expect(chip).toHaveAttribute("aria-pressed", "true");
  await expect(chip).toHaveClass(/\bpinned\b/);
  const panel = detail(page);
  await expect(panel).toBeVisible();
  await expect(page.getByTestId("token-detail-position")).toHaveText(`#${pos}`);
  await expect(page.getByTestId("token-detail-id")).toHaveText(/^\d+$/);
  // The text as a string literal (every escape visible), and the message it is in.
  await expect(page.getByTestId("token-detail-text")).toHaveText(/^".*"$/);
  await expect(page.getByTestId("token-detail-special")).toHaveText(/^(yes|no)$/);
  await expect(page.getByTestId("token-detail-message")).toContainText("turn 0 assistant · generated");
  await expect(page.getByTestId("token-detail-trained")).toHaveText(/^yes \(.*generation_logprobs\)$/);
  await expect(page.getByTestId("token-detail-logprob")).toContainText("none: this policy writes its responses");
  await expect(page.getByTestId("token-detail-alternatives-missing")).toHaveText(/^no alternatives recorded: a text policy/);
  await expect(page.getByTestId("token-alternatives")).toHaveCount(0);
  await page.locator('[data-testid="token-message"][data-kind="generated"]').first().screenshot({ path: "e2e/artifacts/token-detail-chips.png" });
  await panel.screenshot({ path: "e2e/artifacts/token-detail-oracle.png" });

  // Another chip moves the pin: a prompt token, not trained.
  const prompt = promptChips(page).nth(1);
  await prompt.click();
  await expect(chip).toHaveAttribute("aria-pressed", "false");
  await expect(prompt).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("token-detail-position")).toHaveText(`#${await position(prompt)}`);
  await expect(page.getByTestId("token-detail-trained")).toHaveText(/^no \(a prompt token/);
  await expect(page.getByTestId("token-detail-logprob")).toContainText("not generated");

  // The close button unpins.
  await panel.getByRole("button", { name: /Unpin/ }).click();
  await expect(detail(page)).toHaveCount(0);
  await expect(page.locator('.tk-chip[aria-pressed="true"]')).toHaveCount(0);
});

test("model run: a generated token shows its log-probability, probability, the step's entropy and 5 alternatives with their texts", async ({ page }) => {
  test.setTimeout(120_000);
  await runToTokens(page, modelScenario);
  const chip = generatedChips(page).first();
  await chip.click();
  await expect(detail(page)).toBeVisible();
  await expect(page.getByTestId("token-detail-trained")).toHaveText(/^yes /);
  await expect(page.getByTestId("token-detail-logprob")).toHaveText(/^-?\d+\.\d{4}$/);
  await expect(page.getByTestId("token-detail-probability")).toHaveText(/^(\d\.\d{3}|\d\.\d{2}e-\d+)$/);
  await expect(page.getByTestId("token-detail-entropy")).toHaveText(/^\d+\.\d{4} nats/);
  const alternatives = page.getByTestId("token-alternative");
  await expect(alternatives).toHaveCount(5);
  // Each names its token by text, never as a bare id; each row: rank, text, id, logprob, p.
  const texts = await page.getByTestId("token-alternative-text").allTextContents();
  expect(texts).toHaveLength(5);
  for (const t of texts) {
    expect(t.length).toBeGreaterThan(0);
    expect(t).not.toMatch(/^#\d+$/);
  }
  for (let i = 0; i < 5; i++) {
    const cells = await alternatives.nth(i).locator("td").allTextContents();
    expect(cells[0]).toBe(String(i + 1));
    expect(cells[2]).toMatch(/^\d+$/);
    expect(cells[3]).toMatch(/^-?\d+\.\d{4}$/);
  }
  // The chosen token is marked among them, or the panel says it is not among them.
  const chosen = await page.locator('[data-testid="token-alternative"][data-chosen]').count();
  if (chosen === 0) await expect(page.getByTestId("token-chosen-outside")).toBeVisible();
  else expect(chosen).toBe(1);
  // Log-probabilities of the alternatives come best first.
  const lps = await alternatives.evaluateAll((rows) => rows.map((r) => Number(r.querySelectorAll("td")[3]!.textContent)));
  expect([...lps].sort((a, b) => b - a)).toEqual(lps);
  await detail(page).screenshot({ path: "e2e/artifacts/token-detail-model.png" });
  // Lab-only: the result's messages carry no such keys.
  const result = JSON.parse((await page.getByTestId("result-json").textContent())!) as { samples: { message_log: Record<string, unknown>[] }[] };
  for (const s of result.samples) for (const m of s.message_log) for (const key of Object.keys(m)) expect(["role", "content", "token_ids", "generation_logprobs", "invalid_action_violations"]).toContain(key);
});

test("keyboard: one tab stop among the chips, → moves it, Enter pins, Escape unpins, and the arrows leave the sample and turn alone", async ({ page }) => {
  await runToTokens(page, oracleScenario);
  const selectedRow = page.locator('[data-testid="sample-row"][aria-selected="true"]');
  const sampleBefore = await selectedRow.getAttribute("data-sample");
  const currentTurns = page.locator(".ov-cell.current");
  const turnsBefore = await currentTurns.count();
  // One chip is tabbable; the others are reached with the arrows.
  await expect(page.locator('.tk-chip[tabindex="0"]')).toHaveCount(1);
  const first = generatedChips(page).first();
  const pos = Number(await position(first));
  await first.focus();
  await page.keyboard.press("ArrowRight");
  const next = page.locator(`.tk-chip[data-pos="${pos + 1}"]`);
  await expect(next).toBeFocused();
  await expect(next).toHaveAttribute("tabindex", "0");
  await expect(page.locator('.tk-chip[tabindex="0"]')).toHaveCount(1);
  await page.keyboard.press("Enter");
  await expect(next).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("token-detail-position")).toHaveText(`#${pos + 1}`);
  await page.keyboard.press("ArrowLeft");
  await expect(first).toBeFocused();
  await page.keyboard.press(" ");
  await expect(page.getByTestId("token-detail-position")).toHaveText(`#${pos}`);
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowUp");
  await page.keyboard.press("Escape");
  await expect(detail(page)).toHaveCount(0);
  await expect(page.locator('.tk-chip[aria-pressed="true"]')).toHaveCount(0);
  // The arrows moved among the chips only: the sample is the same, no turn was selected by them.
  await expect(selectedRow).toHaveAttribute("data-sample", sampleBefore!);
  await expect(currentTurns).toHaveCount(turnsBefore);
  await expect(page.getByRole("tab", { name: "Tokens" })).toHaveAttribute("aria-selected", "true");
});

test("chat template vs. tokens: the verdict says whether any differing range touches trained tokens, and where each one is", async ({ page }) => {
  await runToTokens(page, oracleScenario);
  await page.getByTestId("template-comparison").locator("summary").click();
  const verdict = page.getByTestId("template-verdict");
  // The oracle's prompt is the raw chat prompt and its observations go without the template's envelope: glue only.
  await expect(verdict).toContainText(/\d+ differing ranges?; none touch trained tokens/);
  const ranges = page.getByTestId("template-range");
  expect(await ranges.count()).toBeGreaterThan(0);
  for (const text of await ranges.allTextContents()) expect(text).toMatch(/^(template glue (between|before|after) |in )/);
  await expect(page.locator('[data-testid="template-range"][data-trained="true"]')).toHaveCount(0);
  await verdict.screenshot({ path: "e2e/artifacts/token-detail-template.png" });
});
