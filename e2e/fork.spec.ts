import type { Locator, Page } from "@playwright/test";
import { expect, loadPreset, test } from "./fixtures.js";

const status = (page: Page) => page.getByTestId("run-status");
const turns = (page: Page) => page.getByTestId("transcript").getByTestId("turn");
const turn = (page: Page, n: number) => page.locator(`[data-testid="transcript"] [data-testid="turn"][data-turn="${n}"]`);
const OPPOSITE: Record<string, string> = { up: "down", down: "up", left: "right", right: "left" };

/** The board's cells in reading order ("" for the blank), as the Environment tab draws them for the selected turn. */
async function boardAfter(page: Page, n: number): Promise<string[]> {
  await page.getByRole("tab", { name: /Transcript/ }).click();
  await turn(page, n).locator(".tx-turn-title").click();
  await page.getByRole("tab", { name: "Environment" }).click();
  await expect(page.getByTestId("env-view")).toContainText(`state after turn ${n}`);
  const cells = await page.getByTestId("puzzle-board").getByRole("gridcell").allTextContents();
  await page.getByRole("tab", { name: /Transcript/ }).click();
  return cells.map((c) => c.trim());
}

const texts = async (turnEl: Locator) => ({
  assistant: await turnEl.getByTestId("assistant-message").innerText(),
  observation: await turnEl.getByTestId("observation").innerText(),
});

test("fork a sample at a middle turn with an edited action: earlier turns kept, the board follows the edited move, compared with its original", async ({ page }) => {
  await page.goto("/");
  await loadPreset(page, "Oracle demo: the sliding puzzle solved");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });

  // The sample with the most turns.
  const rows = page.getByTestId("sample-row");
  const rowCount = await rows.count();
  let longest = 0;
  let most = 0;
  for (let i = 0; i < rowCount; i++) {
    const n = await rows.nth(i).locator("[data-turn]").count();
    if (n > most) [longest, most] = [i, n];
  }
  await rows.nth(longest).locator("[data-turn]").first().click();
  await page.getByRole("tab", { name: /Transcript/ }).click();
  await expect(turns(page)).toHaveCount(most);
  expect(most).toBeGreaterThanOrEqual(3);
  const k = Math.floor(most / 2);

  // What the original did: its texts, the move at turn k − 1 and the tile it slid, and the boards around turn k.
  const original = [];
  for (let t = 0; t < most; t++) original.push(await texts(turn(page, t)));
  const previous = /<action>(\w+)<\/action>/.exec(original[k - 1]!.assistant)![1]!;
  const tile = /Slid tile (\d+) /.exec(original[k - 1]!.observation)![1]!;
  const boardBefore = await boardAfter(page, k - 1);
  const boardOriginal = await boardAfter(page, k);

  // Fork turn k: undo the previous move instead (always legal, never the oracle's own next move). The text carries
  // markup, which must show as text.
  const action = OPPOSITE[previous]!;
  await turn(page, k).getByTestId("fork-from-turn").click();
  const editor = page.getByTestId("fork-editor");
  await expect(editor).toBeVisible();
  await expect(editor.getByTestId("fork-assistant")).toHaveValue(/<action>\w+<\/action>/);
  const edited = `Undo that. <img src=x onerror="window.__pwned=1">\n<action>${action}</action>`;
  await editor.getByTestId("fork-assistant").fill(edited);
  await expect(editor.getByTestId("fork-observation")).toBeDisabled();
  await expect(editor.getByTestId("fork-plan-summary")).toContainText(`Starts before turn ${k}`);
  await editor.getByTestId("fork-run").click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });

  // The fork shows as a branch of the original, and is what the lab shows now.
  const panel = page.getByTestId("forks-panel");
  const item = panel.locator('[data-testid="fork-item"][data-fork="1"]');
  await expect(item).toContainText(`sample ${longest} @ turn ${k}: edited assistant text`);
  await expect(item).toHaveAttribute("data-active", "true");
  await expect(item).toHaveAttribute("data-status", "finished");
  await expect(page.getByTestId("fork-banner")).toBeVisible();
  await expect(page.getByTestId("sample-row")).toHaveCount(1);

  // Earlier turns are kept as they were, numbered as they were; turn k is the edited one.
  for (let t = 0; t < k; t++) {
    expect(await texts(turn(page, t))).toEqual(original[t]);
    await expect(turn(page, t).locator('[data-testid="turn-note"][data-kind="kept"]')).toBeVisible();
  }
  const forked = turn(page, k);
  await expect(forked.locator(".tx-turn-title")).toHaveText(`Turn ${k}`);
  await expect(forked.locator('[data-testid="turn-note"][data-kind="fork-point"]')).toContainText("edited assistant text");
  await expect(forked.getByTestId("assistant-message")).toContainText(`<img src=x onerror="window.__pwned=1">`);
  await expect(forked.getByTestId("assistant-message")).toContainText(`<action>${action}</action>`);
  expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();

  // The fork's first new observation answers the edited move: the tile slid back, the board as before turn k − 1.
  await expect(forked.getByTestId("observation")).toContainText(`Slid tile ${tile} ${action}.`);
  const boardFork = await boardAfter(page, k);
  const expected = [...boardBefore];
  const [at, blank] = [expected.indexOf(tile), expected.indexOf("")];
  [expected[at], expected[blank]] = ["", tile];
  expect(boardFork).toEqual(expected);
  expect(boardFork).not.toEqual(boardOriginal);
  // …and the policy went on from there.
  expect(await turns(page).count()).toBeGreaterThan(k + 1);
  await page.screenshot({ path: "e2e/artifacts/fork-edited-assistant.png", fullPage: true });

  // Back to the original: its turn k is untouched and marked as where the fork branches off.
  await page.getByTestId("fork-show-original").click();
  await expect(page.getByTestId("sample-row")).toHaveCount(rowCount);
  await expect(turns(page)).toHaveCount(most);
  expect(await texts(turn(page, k))).toEqual(original[k]);
  await expect(turn(page, k).locator('[data-testid="turn-note"][data-kind="branch"]')).toContainText("fork 1");

  // Compared with its original: the first divergence is the fork turn.
  await item.getByTestId("fork-compare").click();
  await expect(page.getByTestId("compare-view")).toBeVisible();
  await expect(page.getByTestId("compare-summary")).toHaveAttribute("data-first-turn", String(k));
  await expect(page.getByTestId("compare-label-a")).toContainText("The original run");
  await expect(page.getByTestId("compare-label-b")).toContainText("Fork 1");

  // Showing the fork again from the list.
  await item.getByTestId("fork-show").click();
  await page.getByRole("tab", { name: /Transcript/ }).click();
  await expect(turn(page, k).getByTestId("observation")).toContainText(`Slid tile ${tile} ${action}.`);
});

test("a fork run again, and a fork exported and opened again, continue as the fork did: the original's next scripted turns", async ({ page }) => {
  await page.goto("/");
  await loadPreset(page, "Calculator · scripted · sync");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  await page.getByRole("tab", { name: /Transcript/ }).click();
  await expect(turns(page)).toHaveCount(3);

  // Fork turn 1 with nothing edited: the script's turns 1 and 2 again.
  await turn(page, 1).getByTestId("fork-from-turn").click();
  await page.getByTestId("fork-editor").getByTestId("fork-run").click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  await expect(page.getByTestId("fork-banner")).toBeVisible();
  await expect(turn(page, 1).getByTestId("assistant-message")).toContainText("[8, 2, prod]");
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export JSONL" }).click();
  const exported = (await (await download).path())!;

  // Its scenario run again starts where the fork did: its first turn is the script's turn 1, not turn 0.
  const runAgainContinues = async () => {
    await page.getByRole("toolbar", { name: "Run controls" }).getByRole("button", { name: /^Run( again)?$/ }).click();
    await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
    await page.getByRole("tab", { name: /Transcript/ }).click();
    await expect(turns(page)).toHaveCount(2);
    await expect(turn(page, 0).getByTestId("assistant-message")).toContainText("[8, 2, prod]");
    await expect(turn(page, 1).getByTestId("assistant-message")).toContainText("16");
  };
  await runAgainContinues();

  // The export keeps how the fork went on: opened again, Run again does the same.
  await page.getByLabel("Import JSONL").setInputFiles(exported);
  await expect(page.getByTestId("sample-row")).toHaveCount(1);
  await runAgainContinues();
});
