import { readFileSync } from "node:fs";
import type { Page } from "@playwright/test";
import { decodeScenario } from "../src/scenario/share-url.js";
import { expect, loadPreset, test } from "./fixtures.js";

/** The run on screen is the run a link, the Scenario JSON and Run again carry (not what the form held before). */

const status = (page: Page) => page.getByTestId("run-status");
const scenarioEditor = async (page: Page) => {
  const editor = page.getByLabel("Scenario", { exact: true });
  if (!(await editor.isVisible())) await page.getByText("Scenario JSON (what runs)").click();
  return editor;
};
/** The scenario a Share link carries. */
async function sharedScenario(page: Page): Promise<unknown> {
  await page.getByRole("button", { name: "Share link" }).click();
  const url = await page.getByTestId("share-link").inputValue();
  return decodeScenario(/#scenario=([\w-]+)/.exec(url)![1]!);
}

test("a saved run reopened: its scenario is the form's, the link carries it, and Run again runs it", async ({ page }) => {
  await page.goto("/");
  await loadPreset(page, "Oracle demo: the sliding puzzle solved");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  const ran = JSON.parse(await (await scenarioEditor(page)).inputValue());
  expect(await sharedScenario(page)).toEqual(ran);
  // The export and the saved run are named by environment, policy, size and time.
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export JSONL" }).click();
  expect((await download).suggestedFilename()).toMatch(/^rollout-sliding_puzzle-oracle-4-samples-\d{8}-\d{6}\.jsonl$/);

  // Another day: the form holds the default model run; the saved oracle run is reopened.
  await page.reload();
  await expect(page.getByLabel("Preset")).toHaveValue("");
  await page.getByText(/Saved runs/).click();
  const saved = page.getByTestId("saved-runs");
  await expect(saved.getByRole("button").first()).toHaveText(/^sync · 4 samples · sliding_puzzle · oracle · /);
  // Renamed, and kept so across a reload.
  await saved.getByRole("button", { name: /^Rename / }).first().click();
  await saved.getByLabel(/^New name for /).fill("oracle baseline");
  await saved.getByRole("button", { name: "Rename", exact: true }).click();
  await expect(saved.getByRole("button").first()).toHaveText("oracle baseline");
  await page.reload();
  await page.getByText(/Saved runs/).click();
  await expect(page.getByTestId("saved-runs").getByRole("button").first()).toHaveText("oracle baseline");
  await page.getByTestId("saved-runs").getByRole("button", { name: "oracle baseline", exact: true }).click();
  await expect(page.getByTestId("sample-row")).toHaveCount(4);
  // The form's fields and the preset picker follow the run shown.
  await expect(page.getByLabel("Policy", { exact: true })).toHaveValue("oracle");
  await expect(page.getByTestId("form-detached")).toHaveCount(0);
  expect(JSON.parse(await (await scenarioEditor(page)).inputValue())).toEqual(ran);
  await expect(page.getByTestId("share-message")).toHaveCount(0);
  expect(await sharedScenario(page)).toEqual(ran);
  await expect(page.getByTestId("share-message")).toContainText("Link to this run copied");

  // Run again runs what is shown: the same four oracle samples.
  await page.getByRole("button", { name: "Run again" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  await expect(page.getByTestId("sample-row")).toHaveCount(4);
});

test("an imported run with its scenario fills the form; one without a scenario has no link, and says why", async ({ page }) => {
  await page.goto("/");
  await loadPreset(page, "Calculator · scripted · sync");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  const ran = JSON.parse(await (await scenarioEditor(page)).inputValue());
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export JSONL" }).click();
  const exported = readFileSync((await (await download).path())!, "utf8");

  await page.reload();
  await loadPreset(page, "Built-in trained model on the sliding puzzle (default)");
  await page.getByLabel("Import JSONL").setInputFiles({ name: "run.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(exported) });
  await expect(page.getByTestId("keep-message")).toContainText("imported run.jsonl");
  // A scenario file's run (explicit samples): the JSON editor holds it; the form says its fields do not write it.
  expect(JSON.parse(await (await scenarioEditor(page)).inputValue())).toEqual(ran);
  await expect(page.getByTestId("form-detached")).toBeVisible();
  await expect(page.getByLabel("Preset")).toHaveValue("");
  expect(await sharedScenario(page)).toEqual(ran);

  // The same run exported without its scenario line (another tool's export): nothing to link to.
  const lines = exported.trim().split("\n").filter((line) => !line.includes('"lab/format"'));
  expect(lines).toHaveLength(exported.trim().split("\n").length - 1);
  await page.getByLabel("Import JSONL").setInputFiles({ name: "bare.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(`${lines.join("\n")}\n`) });
  await expect(page.getByTestId("keep-message")).toContainText("imported bare.jsonl");
  await page.getByRole("button", { name: "Share link" }).click();
  await expect(page.getByTestId("share-link")).toHaveCount(0);
  await expect(page.getByTestId("keep-message")).toHaveText(/came without its scenario .*Export it as JSONL to share it\./);
});

test("a link to a run on a module the lab has not loaded says which, offers to load it, and runs once it is loaded", async ({ page }) => {
  const module = `export default {
  name: "echo_env",
  create() {
    return { step(logs) { return { observations: logs.map(() => ({ role: "environment", content: "<environment>echo</environment>" })), metadata: logs.map(() => null), next_stop_strings: null, rewards: logs.map(() => 1), terminateds: logs.map(() => true), answers: null }; } };
  },
  generateDataset({ size, taskName }) {
    return Array.from({ length: size }, () => ({ task_name: taskName, message_log: [{ role: "user", content: "say" }], extra_env_info: null, stop_strings: null }));
  },
};`;
  const scenario = {
    mode: "sync",
    max_seq_len: 256,
    max_rollout_turns: 1,
    envs: { echo: { env: "echo_env", config: {} } },
    dataset: { task_name: "echo", size: 2, seed: 1, config: {} },
    policy: { kind: "scripted", responses: [["hi"], ["ho"]] },
  };
  await page.goto(`/#scenario=${Buffer.from(JSON.stringify(scenario)).toString("base64url")}&run=1`);
  const needs = page.getByTestId("link-needs-module");
  await expect(needs).toContainText("runs on the environment module “echo_env”, which this lab has not loaded. Nothing ran");
  await expect(page.getByTestId("run-status")).toHaveText("idle");
  await page.getByLabel("Load the link's environment module").setInputFiles({ name: "echo_env.js", mimeType: "text/javascript", buffer: Buffer.from(module) });
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 30_000 });
  await expect(needs).toHaveCount(0);
  expect(await page.getByTestId("outcome").allTextContents()).toEqual(["solved", "solved"]);

  // The module is kept in this browser: the same link opened in a new page offers its kept copy, and runs on it.
  await page.goto("about:blank");
  await page.goto(`/#scenario=${Buffer.from(JSON.stringify(scenario)).toString("base64url")}&run=1`);
  await expect(needs).toBeVisible();
  await expect(page.getByTestId("run-status")).toHaveText("idle");
  await page.getByRole("button", { name: /^Load the kept copy of “echo_env” \(echo_env\.js, v1\)$/ }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 30_000 });
  await expect(needs).toHaveCount(0);
  expect(await page.getByTestId("outcome").allTextContents()).toEqual(["solved", "solved"]);
});
