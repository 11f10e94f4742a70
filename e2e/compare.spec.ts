import { readFileSync } from "node:fs";
import type { Locator, Page } from "@playwright/test";
import { expect, loadPreset, pickCompareSample, setScenario, test } from "./fixtures.js";

const status = (page: Page) => page.getByTestId("run-status");
const view = (page: Page) => page.getByTestId("compare-view");
const summary = (page: Page) => page.getByTestId("compare-summary");
const row = (page: Page, turn: number | "prompt") => view(page).locator(`[data-testid="compare-turn"][data-turn="${turn}"]`);

async function run(page: Page) {
  await page.getByRole("button", { name: /^Run/ }).first().click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
}

/** Whether the element is inside the visible area of what scrolls it: the detail pane, or the list's own box. */
async function visibleInList(el: Locator): Promise<boolean> {
  return el.evaluate((node) => {
    const list = node.closest(".pane-scroll") ?? node.closest(".cmp-rows")!;
    const r = node.getBoundingClientRect();
    const l = list.getBoundingClientRect();
    return r.top >= l.top - 1 && r.top < l.bottom;
  });
}

/** The calculator with explicit, identical prompts and scripted answers per sample. */
const PROMPT = "<|im_start|>user\nSolve: (3 + 5) * 2<|im_end|>\n<|im_start|>assistant\n";
const calculator = (responses: string[][]) => ({
  mode: "sync",
  max_seq_len: 1024,
  max_rollout_turns: 6,
  envs: { calc: { env: "calculator", config: {} } },
  samples: responses.map(() => ({
    task_name: "calc",
    message_log: [{ role: "user", content: PROMPT }],
    extra_env_info: { problem: "(3 + 5) * 2", expected_final_answer: 16.0, max_steps: 4, current_step: 0 },
    stop_strings: ["<call: calculator>"],
  })),
  policy: { kind: "scripted", responses },
});
const COMMON = ["[3, 5, sum]<call: calculator>", "[8, 2, prod]<call: calculator>"];
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

test("two samples of a run: aligned turn by turn, the first divergence marked at the right turn, texts as text", async ({ page }) => {
  await page.goto("/");
  // Samples 0 and 1 agree for two turns and part at turn 2 (16, right; 15 and some markup, wrong); sample 2 is sample 0 again.
  await setScenario(page, calculator([[...COMMON, "16"], [...COMMON, `15 ${HOSTILE}`], [...COMMON, "16"]]));
  await run(page);

  // One click: the comparison opens on the selected sample (0) against the next one (1).
  await page.getByRole("tab", { name: "Compare" }).click();
  await expect(view(page)).toBeVisible();
  await expect(summary(page)).toContainText("first divergence at turn 2: assistant text");
  await expect(summary(page)).toHaveAttribute("data-first-turn", "2");
  await expect(view(page).getByTestId("compare-label-a")).toContainText("sample 0");
  await expect(view(page).getByTestId("compare-label-b")).toContainText("sample 1");

  const turns = view(page).getByTestId("compare-turn");
  await expect(turns).toHaveCount(4);
  for (const t of ["prompt", 0, 1] as const) {
    await expect(row(page, t)).toHaveAttribute("data-diverged", "false");
    await expect(row(page, t)).not.toHaveAttribute("data-first", "true");
  }
  const first = row(page, 2);
  await expect(first).toHaveAttribute("data-diverged", "true");
  await expect(first).toHaveAttribute("data-first", "true");
  await expect(view(page).locator('[data-first="true"]')).toHaveCount(1);
  await expect(first).toContainText("first divergence");
  expect(await visibleInList(first)).toBe(true);

  // The differing spans are highlighted in each side's text; the rest is plain text.
  const markA = first.locator('[data-side="a"] [data-testid="compare-mark"]');
  const markB = first.locator('[data-side="b"] [data-testid="compare-mark"]');
  await expect(markA.first()).toHaveText("6");
  await expect(markB.first()).toContainText("5 <img src=x onerror=");
  // Per-turn reward and termination differences.
  await expect(first.locator('[data-testid="compare-difference"][data-field="reward"]')).toBeVisible();
  await expect(first.locator('[data-side="a"] [data-testid="compare-reward"]')).toContainText("reward +1");
  await expect(first.locator('[data-side="b"] [data-testid="compare-reward"]')).toContainText("reward 0");
  await expect(view(page).getByTestId("compare-ending")).toHaveAttribute("data-diverged", "true");

  // The markup from the model is text: nothing was parsed or run.
  await expect(view(page).locator("img, script")).toHaveCount(0);
  await expect(first.locator('[data-side="b"]')).toContainText("<script>window.__pwned=2</script>");
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

  // A second click: sample 2 on side B is sample 0's twin.
  await pickCompareSample(page, "B", 2);
  await expect(summary(page)).toContainText("identical: 3 turns");
  await expect(summary(page)).toHaveAttribute("data-diverged", "false");
  await expect(view(page).locator('[data-testid="compare-turn"][data-diverged="true"]')).toHaveCount(0);

  // Swapping the sides and showing only differing rows.
  await pickCompareSample(page, "B", 1);
  await page.getByRole("button", { name: "Swap A and B" }).click();
  await expect(view(page).getByTestId("compare-label-a")).toContainText("sample 1");
  await expect(summary(page)).toContainText("first divergence at turn 2: assistant text");
  await page.getByLabel("only turns that differ").check();
  await expect(turns).toHaveCount(1);
  await expect(turns.first()).toHaveAttribute("data-turn", "2");
  await page.screenshot({ path: "e2e/artifacts/compare-samples.png", fullPage: true });
});

test("a rerun against the saved run and against its exported file: the first divergence is at the turn where they part", async ({ page }) => {
  await page.goto("/");
  await loadPreset(page, "Sliding puzzle · oracle · sync");
  await page.getByText("Scenario JSON (what runs)").click();
  const scenario = JSON.parse(await page.getByLabel("Scenario", { exact: true }).inputValue());
  await setScenario(page, { ...scenario, policy: { ...scenario.policy, error_rate: 0 } });
  await run(page);
  const before = JSON.parse((await page.getByTestId("result-json").textContent())!);
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export JSONL" }).click();
  const exported = (await (await download).path())!;

  // The same puzzles, now with the oracle making seeded mistakes.
  await setScenario(page, { ...scenario, policy: { ...scenario.policy, error_rate: 0.5 } });
  await run(page);
  const after = JSON.parse((await page.getByTestId("result-json").textContent())!);

  // Where the two runs part, from their result JSON: the first sample and assistant turn that differ.
  type Sample = { message_log: { role: string; content: string }[] };
  const assistants = (s: Sample) => s.message_log.filter((m) => m.role === "assistant").map((m) => m.content);
  let sample = -1;
  let turn = -1;
  for (let i = 0; i < before.samples.length && sample < 0; i++) {
    const [a, b] = [assistants(after.samples[i]), assistants(before.samples[i])];
    for (let t = 0; t < Math.max(a.length, b.length); t++) {
      if (a[t] !== b[t]) {
        sample = i;
        turn = t;
        break;
      }
    }
  }
  expect(sample, "the oracle's mistakes changed some sample").toBeGreaterThanOrEqual(0);

  await page.getByRole("tab", { name: "Compare" }).click();
  await pickCompareSample(page, "A", sample);
  // Both runs are saved in this browser (newest first): the older one is the first run.
  const sourceB = page.getByLabel("Side B source");
  await expect.poll(async () => (await sourceB.locator("option").allTextContents()).filter((t) => t.startsWith("Saved:")).length).toBe(2);
  const saved = await sourceB.locator("option").evaluateAll((options) =>
    options.filter((o) => o.textContent!.startsWith("Saved:")).map((o) => (o as HTMLOptionElement).value),
  );
  await sourceB.selectOption(saved[1]!);
  await pickCompareSample(page, "B", sample);
  await expect(summary(page)).toContainText(`first divergence at turn ${turn}: assistant text`);
  await expect(view(page).getByTestId("compare-label-b")).toContainText(`sample ${sample}`);
  await expect(view(page).getByTestId("compare-label-b")).toContainText("saved run");
  const first = row(page, turn);
  await expect(first).toHaveAttribute("data-first", "true");
  await expect(first.getByTestId("compare-mark").first()).toBeVisible();
  expect(await visibleInList(first)).toBe(true);
  for (let t = 0; t < turn; t++) await expect(row(page, t)).toHaveAttribute("data-diverged", "false");
  await expect(row(page, "prompt")).toHaveAttribute("data-diverged", "false");

  // The exported file of the first run, added as a source (the current run stays): the same divergence.
  await page.getByLabel("Compare with a JSONL file").setInputFiles({ name: "first-run.jsonl", mimeType: "application/x-ndjson", buffer: readFileSync(exported) });
  await expect(page.getByTestId("compare-message")).toContainText("added first-run.jsonl");
  await expect(view(page).getByTestId("compare-label-b")).toContainText("file first-run.jsonl");
  await expect(summary(page)).toContainText(`first divergence at turn ${turn}: assistant text`);
  await expect(row(page, turn)).toHaveAttribute("data-first", "true");
  await expect(page.getByRole("tab", { name: /Transcript/ })).toBeVisible();

  // The current run against its own saved copy: identical.
  await sourceB.selectOption(saved[0]!);
  await expect(summary(page)).toContainText("identical");
  await page.screenshot({ path: "e2e/artifacts/compare-runs.png", fullPage: true });
});
