import { resolve } from "node:path";
import { expect, test, setScenario } from "./fixtures.js";
import { startStandInHub } from "./stand-in-hub.js";

const builtinTiny = resolve("public/models/builtin/tiny");

const scenario = (model: string) => ({
  mode: "sync",
  max_seq_len: 1024,
  max_rollout_turns: 1,
  max_new_tokens: 8,
  greedy: true,
  envs: { t: { env: "sliding_puzzle", config: {} } },
  samples: [{ task_name: "t", message_log: [{ role: "user", content: "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n" }] }],
  policy: { kind: "model", model, device: "wasm" },
});

test("a hub id loads from the hub address (a stand-in hub on localhost)", async ({ page, guard }) => {
  const hub = await startStandInHub("stand-in/tiny-model", builtinTiny);
  try {
    guard.allow(hub.origin);
    await page.goto("/");
    await setScenario(page, JSON.stringify(scenario("stand-in/tiny-model")));
    await page.getByLabel("Hub address").fill(`${hub.origin}/`);
    await page.getByRole("button", { name: "Run" }).click();
    await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 30_000 });
    await expect(page.getByTestId("model-status")).toContainText("ready on WASM");
    expect(hub.requested).toEqual(expect.arrayContaining([
      "/stand-in/tiny-model/resolve/main/config.json",
      "/stand-in/tiny-model/resolve/main/tokenizer.json",
      "/stand-in/tiny-model/resolve/main/onnx/model.onnx",
    ]));
  } finally {
    hub.server.close();
  }
});

test("a local model folder the user picks loads from memory", async ({ page }) => {
  await page.goto("/");
  await setScenario(page, JSON.stringify(scenario("builtin:tiny")));
  await page.getByLabel("Local model folder").setInputFiles(builtinTiny);
  await expect(page.getByRole("textbox", { name: "Model", exact: true })).toHaveValue("local:tiny");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 30_000 });
  await expect(page.getByTestId("model-status")).toContainText("local:tiny");
});

test("a hub model that is not there fails with the file named", async ({ page, guard }) => {
  const hub = await startStandInHub("stand-in/tiny-model", builtinTiny);
  try {
    guard.allow(hub.origin);
    await page.goto("/");
    await setScenario(page, JSON.stringify(scenario("stand-in/missing-model")));
    await page.getByLabel("Hub address").fill(hub.origin);
    await page.getByRole("button", { name: "Run" }).click();
    await expect(page.getByTestId("run-status")).toHaveText("failed", { timeout: 30_000 });
    await expect(page.getByTestId("run-error")).toContainText(
      `could not load model 'stand-in/missing-model' (file config.json): 404 Not Found at ${hub.origin}/stand-in/missing-model/resolve/main/config.json`,
    );
  } finally {
    hub.server.close();
  }
});

test("a cleared hub address sends the next hub load to huggingface.co, not to the address used before", async ({ page, guard }) => {
  const hub = await startStandInHub("stand-in/qwen3", resolve("public/models/builtin/tiny-qwen3"));
  try {
    guard.allow(hub.origin);
    const text = {
      mode: "sync",
      max_seq_len: 4096,
      max_rollout_turns: 1,
      envs: { t: { env: "sliding_puzzle", config: {} } },
      dataset: { task_name: "t", size: 1, seed: 0 },
      policy: { kind: "scripted", responses: [["<action>view</action>"]] },
      tokenizer: "stand-in/qwen3",
    };
    // The Hub address is set in the model panel, shown for a model policy; it holds for a text policy's tokenizer too.
    const hubAddress = async (address: string) => {
      await setScenario(page, scenario("builtin:tiny"));
      await page.getByLabel("Hub address").fill(address);
      await setScenario(page, text);
    };
    await page.goto("/");
    await hubAddress(`${hub.origin}/`);
    await page.getByRole("button", { name: "Run" }).click();
    await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 60_000 });
    expect(hub.requested).toContain("/stand-in/qwen3/resolve/main/tokenizer.json");
    const before = hub.requested.length;

    // Cleared: the set-up (and a link's host list) say huggingface.co, so that is where the worker must go.
    await hubAddress("");
    await page.getByRole("toolbar", { name: "Run controls" }).getByRole("button", { name: /^Run( again)?$/ }).click();
    await expect(page.getByTestId("run-status")).toHaveText("failed", { timeout: 60_000 });
    await expect(page.getByTestId("run-error")).toContainText("tokenizer 'stand-in/qwen3': could not load it from the hub (https://huggingface.co/)");
    expect(hub.requested.length).toBe(before);
    expect(guard.outside.length).toBeGreaterThan(0);
    expect(guard.outside.every((url) => url.startsWith("https://huggingface.co/stand-in/qwen3/"))).toBe(true);
    // The test's guard blocked those requests; they were the ones expected.
    guard.outside.length = 0;
    guard.consoleErrors.splice(0, guard.consoleErrors.length, ...guard.consoleErrors.filter((m) => !/Failed to load resource|ERR_FAILED|Failed to fetch/.test(m)));
  } finally {
    hub.server.close();
  }
});
