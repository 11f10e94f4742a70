import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { expect, setScenario, test } from "./fixtures.js";

/** Success and failure do not look alike: outcomes per sample, a run summary, the status, and badges on turns. */

const status = (page: Page) => page.getByTestId("run-status");
const numberGuess = JSON.parse(readFileSync(join(import.meta.dirname, "..", "src", "scenario", "examples", "number-guess.json"), "utf8"));

test("a number-guess sample out of guesses reads failed, not like the winners; the summary and the status say how the run went", async ({ page }) => {
  await page.goto("/");
  await expect(page.locator('[data-testid="user-environment"][data-name="number_guess"]')).toHaveAttribute("data-status", "ready");
  await setScenario(page, numberGuess);
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  // The environment ended all three; sample 0 ran out of guesses (reward 0).
  expect(await page.getByTestId("termination").allTextContents()).toEqual(Array(3).fill("terminated by the environment"));
  expect(await page.getByTestId("outcome").allTextContents()).toEqual(["failed", "solved", "solved"]);
  const row0 = page.locator('[data-testid="sample-row"][data-sample="0"]');
  await expect(row0).toHaveAttribute("data-outcome", "failed");
  // Its last cell is no green ✓.
  const last = row0.locator("[data-turn]").last();
  await expect(last).toHaveText("✗");
  await expect(last).toHaveAttribute("aria-label", /terminated by the environment, not solved/);
  await expect(page.locator('[data-testid="sample-row"][data-sample="1"] [data-turn]').last()).toHaveText("✓");
  await expect(page.getByTestId("run-summary")).toHaveText(/^solved 2 of 3 · failed 1 · mean reward 0\.6667/);
  // A clean run is just finished.
  await expect(page.getByTestId("run-status-detail")).toHaveCount(0);
  await page.screenshot({ path: "e2e/artifacts/outcomes-number-guess.png" });

  // n goes to the next sample that did not end well (round the batch); 2 opens the Tokens tab.
  await page.locator('[data-testid="sample-row"][data-sample="1"]').click();
  await page.keyboard.press("n");
  await expect(page.locator('[data-testid="sample-row"][data-sample="0"]')).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("2");
  await expect(page.getByRole("tab", { name: "Tokens" })).toHaveAttribute("aria-selected", "true");
  // A scripted policy's tokens: no log-probabilities to colour them by, and the token view says so.
  await expect(page.getByTestId("no-logprobs")).toContainText("this policy writes its responses, it does not sample them");
  await expect(page.getByTestId("token-message").filter({ hasText: "mean logprob" })).toHaveCount(0);
});

test("a run whose samples all ended in an error says so, and a truncated response is a badge on its turn", async ({ page }) => {
  await page.goto("/");
  await expect(page.locator('[data-testid="user-environment"][data-name="number_guess"]')).toHaveAttribute("data-status", "ready");
  // The built-in model's turns are cut at 2 tokens: every turn's response is truncated.
  await setScenario(page, {
    mode: "sync",
    max_seq_len: 1024,
    max_rollout_turns: 2,
    max_new_tokens: 2,
    greedy: true,
    envs: { puzzle: { env: "sliding_puzzle", config: {} } },
    dataset: { task_name: "puzzle", size: 2, seed: 1, config: { size: 2, shuffle_moves: 2, max_moves: 4 } },
    policy: { kind: "model", model: "builtin:tiny", device: "wasm" },
  });
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 120_000 });
  const badged = page.locator('[data-testid="sample-row"] [data-turn][data-problems]');
  await expect(badged.first()).toHaveAttribute("aria-label", /response truncated at its token limit/);
  await expect(page.getByTestId("run-summary-truncated")).toHaveText(/\d+ truncated responses?/);

  // Three samples whose environment throws: finished, with 3 errors.
  await setScenario(page, {
    mode: "sync",
    max_seq_len: 1024,
    max_rollout_turns: 2,
    envs: { guess: { env: "number_guess", config: {} } },
    samples: [0, 1, 2].map(() => ({ task_name: "guess", message_log: [{ role: "user", content: "guess" }], extra_env_info: { broken: true } })),
    policy: { kind: "scripted", responses: [["<guess>1</guess>"], ["<guess>1</guess>"], ["<guess>1</guess>"]] },
  });
  await page.getByRole("button", { name: "Run again" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  expect(await page.getByTestId("outcome").allTextContents()).toEqual(["error", "error", "error"]);
  await expect(page.getByTestId("run-status-detail")).toHaveText("with 3 errors");
  await expect(page.getByTestId("run-summary")).toHaveText(/^solved 0 of 3 · error 3/);
  // The failing turn shows the error where it happened; so does the Environment tab.
  const failed = page.getByTestId("transcript").getByTestId("turn").last();
  await expect(failed.getByTestId("turn-error")).toContainText("This turn ended the sample with an error after the response");
  await expect(failed).toContainText("no reward: the turn failed");
  await page.getByRole("tab", { name: "Environment" }).click();
  await expect(page.getByTestId("env-view")).toContainText("turn 0 ended the sample with an error");
});

test("a set-up that cannot work is refused in the form with why: the oracle with a user module, the puzzle's script for another game", async ({ page }) => {
  await page.goto("/");
  await expect(page.locator('[data-testid="user-environment"][data-name="number_guess"]')).toHaveAttribute("data-status", "ready");
  await page.getByLabel("Environment", { exact: true }).selectOption("number_guess");
  await page.getByLabel("Policy", { exact: true }).selectOption("oracle");
  await expect(page.getByTestId("setup-problems")).toContainText("The oracle plays the built-in environments only");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-error")).toContainText("This set-up cannot run:");
  await expect(page.getByTestId("sample-row")).toHaveCount(0);

  await page.getByLabel("Policy", { exact: true }).selectOption("scripted");
  await expect(page.getByTestId("setup-problems")).toContainText("still the sliding puzzle's example");
  await page.getByLabel("Scripted responses").fill('[["<guess>4</guess>"]]');
  await expect(page.getByTestId("setup-problems")).toHaveCount(0);
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
});
