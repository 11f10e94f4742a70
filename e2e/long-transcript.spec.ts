import type { Page } from "@playwright/test";
import { expect, setScenario, test } from "./fixtures.js";

/**
 * A 200-turn transcript renders only the turns near the screen (src/app/views/Transcript.tsx), and a turn that is
 * not rendered can still be selected, shown, reached with the keys and scrolled to.
 */

const TURNS = 200;

// A user environment module (loaded as a user would, into its own Worker) that never ends an episode: the run's
// max_rollout_turns does, so one sample gets exactly TURNS turns, each with its own texts.
const longEnv = `
export default {
  name: "long_env",
  title: "Long (e2e)",
  create() {
    return {
      step(logs, metadata) {
        return {
          observations: metadata.map((m) => ({ role: "environment", content: "<environment>observation of turn " + m.turn + "</environment>\\n" })),
          metadata: metadata.map((m) => ({ turn: m.turn + 1 })),
          next_stop_strings: null,
          rewards: metadata.map(() => 0),
          terminateds: metadata.map(() => false),
          answers: null,
        };
      },
    };
  },
  generateDataset({ size, taskName }) {
    return Array.from({ length: size }, () => ({ task_name: taskName, message_log: [{ role: "user", content: "talk for a long time" }], extra_env_info: { turn: 0 }, stop_strings: null }));
  },
};`;

const scenario = {
  mode: "sync",
  max_seq_len: 1 << 20,
  max_rollout_turns: TURNS,
  envs: { long: { env: "long_env", config: {} } },
  dataset: { task_name: "long", size: 1, seed: 0, config: {} },
  policy: { kind: "scripted", responses: [Array.from({ length: TURNS }, (_, t) => `answer number ${t} of ${TURNS}`)] },
};

const turns = (page: Page) => page.getByTestId("transcript").getByTestId("turn");
const turn = (page: Page, n: number) => page.locator(`[data-testid="transcript"] [data-testid="turn"][data-turn="${n}"]`);

test("a 200-turn transcript draws the turns in view; any turn can be selected, shown and scrolled to", async ({ page }) => {
  await page.goto("/");
  await page.getByLabel("Environment module file").setInputFiles({ name: "long_env.js", mimeType: "text/javascript", buffer: Buffer.from(longEnv) });
  await expect(page.locator('[data-testid="user-environment"][data-name="long_env"]')).toHaveAttribute("data-status", "ready");
  await setScenario(page, scenario);
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 60_000 });

  const transcript = page.getByTestId("transcript");
  await expect(transcript).toHaveAttribute("data-virtual", "");
  await expect(page.getByTestId("transcript-tools")).toContainText(`${TURNS} turns`);
  // The first turns are there (the page is at the top), far fewer than 200 of them.
  await expect(turn(page, 0)).toContainText("answer number 0 of 200");
  const drawn = await turns(page).count();
  expect(drawn).toBeGreaterThan(0);
  expect(drawn).toBeLessThan(30);
  await expect(turn(page, 150)).toHaveCount(0);

  // Turn 150, selected through the transcript's "Go to turn": scrolled in, drawn, selected.
  await page.getByLabel("Go to turn").fill("150");
  await page.getByLabel("Go to turn").press("Enter");
  await expect(turn(page, 150)).toBeInViewport();
  await expect(turn(page, 150)).toHaveClass(/selected/);
  await expect(turn(page, 150)).toContainText("answer number 150 of 200");
  await expect(turn(page, 150)).toContainText("observation of turn 150");
  expect(await turns(page).count()).toBeLessThan(30);
  await expect(turn(page, 0)).toHaveCount(0);

  // The keys move on from there (→ twice: turn 152), and back (← : 151).
  await turn(page, 150).click();
  await page.keyboard.press("l");
  await page.keyboard.press("l");
  await expect(turn(page, 152)).toHaveClass(/selected/);
  await expect(turn(page, 152)).toBeInViewport();
  await page.keyboard.press("h");
  await expect(turn(page, 151)).toHaveClass(/selected/);

  // Selecting a turn elsewhere (the batch overview's cell for turn 3) brings that one back.
  await page.locator('[data-testid="sample-row"] [data-turn="3"]').click();
  await expect(turn(page, 3)).toHaveClass(/selected/);
  await expect(turn(page, 3)).toBeInViewport();

  // Scrolled to the transcript's end: the last turn and how the
  // sample ended. Turns measured on the way change the list's height, so scroll until it holds.
  await expect(async () => {
    // The detail pane scrolls the transcript where the lab has panes; the page, where it is one column.
    await transcript.evaluate((el) => {
      const pane = el.closest<HTMLElement>(".pane-scroll");
      if (pane) pane.scrollTop += el.getBoundingClientRect().bottom - pane.getBoundingClientRect().bottom;
      else window.scrollTo(0, el.getBoundingClientRect().bottom + window.scrollY - window.innerHeight);
    });
    await expect(turn(page, TURNS - 1)).toBeInViewport({ timeout: 1000 });
  }).toPass({ timeout: 15_000 });
  await expect(turn(page, TURNS - 1)).toContainText(`answer number ${TURNS - 1} of 200`);
  await expect(page.getByTestId("transcript-end")).toContainText("max");
  expect(await turns(page).count()).toBeLessThan(30);

  // "Render all turns": every turn in the page (for find in page), as a short transcript; and back.
  await page.getByRole("button", { name: "Render all turns (for find in page)" }).click();
  await expect(turns(page)).toHaveCount(TURNS);
  await expect(transcript).not.toHaveAttribute("data-virtual", "");
  await expect(turn(page, 42)).toContainText("answer number 42 of 200");
  await page.getByRole("button", { name: "Draw only the turns in view" }).click();
  await expect(transcript).toHaveAttribute("data-virtual", "");
  expect(await turns(page).count()).toBeLessThan(30);
});
