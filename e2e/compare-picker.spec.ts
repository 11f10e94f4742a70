import type { Page } from "@playwright/test";
import { expect, pickCompareSample, setScenario, test } from "./fixtures.js";

/** The Compare tab's searchable sample picker and its "compare A with…" shortcuts, on a run with failures. */

const status = (page: Page) => page.getByTestId("run-status");
const view = (page: Page) => page.getByTestId("compare-view");
const picker = (page: Page, side: "A" | "B") => page.getByRole("combobox", { name: `Side ${side} sample` });
const options = (page: Page, side: "A" | "B") => page.getByRole("listbox", { name: `Side ${side} samples` }).getByRole("option");
const labelB = (page: Page) => view(page).getByTestId("compare-label-b");

// The oracle presets "with mistakes" still solve every sample (their mistakes are penalised turns): this run's
// scripted calculator samples end every way the picker names, on prompts that repeat.
const C = "<call: calculator>";
const LONG_TASK = "calculator_with_a_task_name_far_too_long_for_an_option_of_the_sample_picker";
type Problem = { problem: string; expected_final_answer: number };
const P: Problem = { problem: "(3 + 5) * 2", expected_final_answer: 16 };
const Q: Problem = { problem: "(2 + 2) * 3", expected_final_answer: 12 };
const R: Problem = { problem: "(1 + 6) * 1", expected_final_answer: 7 };
const S: Problem = { problem: "(1 + 1) * 1", expected_final_answer: 2 };
const solve = (a: number, b: number, c: number, answer: string) => [`[${a}, ${b}, sum]${C}`, `[${a + b}, ${c}, prod]${C}`, answer];
const SAMPLES: [Problem, string[], string?][] = [
  [P, solve(3, 5, 2, "16")], // 0 solved
  [P, solve(3, 5, 2, "15")], // 1 failed (a wrong answer)
  [Q, solve(2, 2, 3, "11")], // 2 failed
  [P, solve(3, 5, 2, "16")], // 3 solved: sample 0's and 1's prompt
  [Q, [...solve(2, 2, 3, "").slice(0, 2), `[12, 1, prod]${C}`]], // 4 cut off (max turns): Q is never solved
  [R, solve(1, 6, 1, "7"), LONG_TASK], // 5 solved, its prompt only once
  // 6–59 solved (so the list has more than the 50 options it renders)
  ...Array.from({ length: 54 }, (): [Problem, string[]] => [S, solve(1, 1, 1, "2")]),
];
const scenario = {
  mode: "sync",
  max_seq_len: 1024,
  max_rollout_turns: 3,
  envs: { calc: { env: "calculator", config: {} }, [LONG_TASK]: { env: "calculator", config: {} } },
  samples: SAMPLES.map(([p, , task]) => ({
    task_name: task ?? "calc",
    message_log: [{ role: "user", content: `<|im_start|>user\nSolve: ${p.problem}<|im_end|>\n<|im_start|>assistant\n` }],
    extra_env_info: { ...p, max_steps: 4, current_step: 0 },
    stop_strings: [C],
  })),
  policy: { kind: "scripted", responses: SAMPLES.map(([, r]) => r) },
};

async function openCompare(page: Page) {
  await page.goto("/");
  await setScenario(page, scenario);
  await page.getByRole("button", { name: /^Run/ }).first().click();
  await expect(status(page)).toHaveText("finished", { timeout: 60_000 });
  await page.getByRole("tab", { name: "Compare" }).click();
  await expect(view(page)).toBeVisible();
  // Until a side is picked, the sides follow the selection: sample 0 against sample 1.
  await expect(labelB(page)).toContainText("sample 1 ");
}

test("typing 'failed' in side B's picker lists the failed samples; the keyboard alone chooses one, and the comparison shows it", async ({ page }) => {
  await openCompare(page);
  const b = picker(page, "B");
  await expect(b).toHaveAttribute("aria-expanded", "false");
  await b.focus();
  await page.keyboard.type("failed");
  await expect(b).toHaveAttribute("aria-expanded", "true");
  // Failed: 1 and 2 (sample 4 was cut off, not failed).
  await expect(options(page, "B")).toHaveText(["sample 1 · calc · failed · reward 0", "sample 2 · calc · failed · reward 0"]);
  await expect(b).not.toHaveAttribute("aria-activedescendant");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  const second = options(page, "B").nth(1);
  await expect(second).toHaveAttribute("aria-selected", "true");
  await expect(b).toHaveAttribute("aria-activedescendant", (await second.getAttribute("id"))!);
  await page.keyboard.press("Enter");
  await expect(b).toHaveAttribute("aria-expanded", "false");
  await expect(b).toHaveAttribute("data-sample", "2");
  await expect(b).toHaveValue("sample 2 · calc · failed · reward 0");
  await expect(labelB(page)).toContainText("sample 2 ");
  // Sample 0 (P) against sample 2 (Q): they part at the prompt.
  await expect(view(page).getByTestId("compare-summary")).toContainText("first divergence at the prompt");

  // Picking a side stops following the selection.
  await page.getByRole("tab", { name: "Transcript" }).click();
  await page.locator('[data-testid="sample-row"][data-sample="3"]').click();
  await page.getByRole("tab", { name: "Compare" }).click();
  await expect(labelB(page)).toContainText("sample 2 ");

  // Escape closes the list and leaves B as it was; an index typed and Enter takes that sample.
  await b.focus();
  await page.keyboard.type("cut");
  await expect(options(page, "B")).toHaveText(["sample 4 · calc · cut off · reward 0"]);
  await page.keyboard.press("Escape");
  await expect(b).toHaveAttribute("aria-expanded", "false");
  await expect(b).toHaveAttribute("data-sample", "2");
  await b.focus();
  await page.keyboard.type("17");
  await expect(options(page, "B").first()).toHaveAttribute("data-sample", "17");
  await page.keyboard.press("Enter");
  await expect(labelB(page)).toContainText("sample 17 ");

  // A long list renders 50 options and says how many more; typing narrows it.
  await b.focus();
  await page.keyboard.type("solved");
  await expect(options(page, "B")).toHaveCount(50);
  await expect(page.getByTestId("compare-picker-more")).toHaveText("7 more — type to narrow");
  await page.keyboard.type(" 5");
  await expect(options(page, "B")).toHaveCount(11);
  await expect(page.getByTestId("compare-picker-more")).toHaveCount(0);
  // The long task name is cut in the option, whole in its title.
  const long = options(page, "B").first();
  await expect(long).toHaveAttribute("data-sample", "5");
  await expect(long).toHaveAttribute("title", new RegExp(`task ${LONG_TASK}`));
  await page.screenshot({ path: "e2e/artifacts/compare-picker.png" });
  await page.keyboard.type("zzz");
  await expect(page.getByTestId("compare-picker-more")).toHaveText("no sample matches “solved 5zzz”");
  await page.keyboard.press("Escape");
});

test("'the next failure' sets B to the next sample after A that did not succeed, round the batch; 'a success of the same prompt' only when there is one", async ({ page }) => {
  await openCompare(page);
  const nextFailure = view(page).getByTestId("compare-next-failure");
  const success = view(page).getByTestId("compare-same-prompt");
  const b = picker(page, "B");

  // A = 0 (solved): the next failure is 1; 3 solved the same prompt.
  await pickCompareSample(page, "B", 5);
  await expect(nextFailure).toBeEnabled();
  await expect(nextFailure).toHaveAttribute("title", "B becomes sample 1 · calc · failed · reward 0");
  await nextFailure.click();
  await expect(b).toHaveAttribute("data-sample", "1");
  await expect(labelB(page)).toContainText("sample 1 ");

  // A = 2: 4 (cut off) comes next, skipping the solved 3.
  await pickCompareSample(page, "A", 2);
  await nextFailure.click();
  await expect(b).toHaveAttribute("data-sample", "4");
  // A = 4: past the end of the batch, round to 1.
  await pickCompareSample(page, "A", 4);
  await nextFailure.click();
  await expect(b).toHaveAttribute("data-sample", "1");

  // A = 1 (P, failed): 3 is the first success of P after it.
  await pickCompareSample(page, "A", 1);
  await expect(success).toBeEnabled();
  await success.click();
  await expect(b).toHaveAttribute("data-sample", "3");
  await expect(view(page).getByTestId("compare-summary")).toContainText("first divergence at turn 2");
  // A = 3 (P, solved): the other success of P is 0, round the batch.
  await pickCompareSample(page, "A", 3);
  await success.click();
  await expect(b).toHaveAttribute("data-sample", "0");

  // A = 4 (Q): Q was never solved. A = 5 (R): solved only by A itself. Disabled, with the reason, and a click does nothing.
  for (const a of [4, 5]) {
    await pickCompareSample(page, "A", a);
    await expect(success).toBeDisabled();
    await expect(success).toHaveAttribute("title", "no success of this prompt in this run");
    await expect(success).toHaveAttribute("aria-description", "no success of this prompt in this run");
  }
  // Forced: Playwright waits for an aria-disabled button to be enabled.
  await success.click({ force: true });
  await expect(b).toHaveAttribute("data-sample", "0");
  await expect(nextFailure).toBeEnabled();
});

test("with no failure in the run, 'the next failure' is disabled with the reason", async ({ page }) => {
  await page.goto("/");
  await setScenario(page, { ...scenario, samples: scenario.samples.slice(0, 2), policy: { kind: "scripted", responses: [solve(3, 5, 2, "16"), solve(3, 5, 2, "16")] } });
  await page.getByRole("button", { name: /^Run/ }).first().click();
  await expect(status(page)).toHaveText("finished", { timeout: 60_000 });
  await page.getByRole("tab", { name: "Compare" }).click();
  const nextFailure = view(page).getByTestId("compare-next-failure");
  await expect(nextFailure).toBeDisabled();
  await expect(nextFailure).toHaveAttribute("title", "no other sample failed");
  await expect(view(page).getByTestId("compare-same-prompt")).toBeEnabled();
});
