import { expect, test, setScenario } from "./fixtures.js";

// Runs only in the "webgpu" project, whose Chromium has --enable-unsafe-webgpu (a SwiftShader adapter here:
// correct but slow, so a few tokens only).
test("forced WebGPU on the software adapter: the rollout runs in the page and greedy tokens match WASM's", async ({ page }) => {
  test.setTimeout(180_000);
  const scenario = (device: string) => ({
    mode: "sync",
    max_seq_len: 1024,
    max_rollout_turns: 1,
    max_new_tokens: 4,
    greedy: true,
    envs: { t: { env: "sliding_puzzle", config: {} } },
    samples: [{ task_name: "t", message_log: [{ role: "user", content: "<|im_start|>user\nMove.<|im_end|>\n<|im_start|>assistant\n" }], stop_strings: ["</action>"] }],
    policy: { kind: "model", model: "builtin:tiny", device },
  });
  const run = async (device: string) => {
    await page.goto("/");
    await setScenario(page, JSON.stringify(scenario(device)));
    await page.getByRole("button", { name: "Run" }).click();
    await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 150_000 });
    return JSON.parse((await page.getByTestId("result-json").textContent())!).samples[0].message_log[1].token_ids as number[];
  };
  const webgpu = await run("webgpu");
  await expect(page.getByTestId("model-status")).toContainText("ready on WEBGPU");
  await expect(page.getByTestId("model-status")).toContainText("software adapter");
  expect(webgpu).toHaveLength(4);
  expect(await run("wasm")).toEqual(webgpu);
});

test("WebGPU: several samples over turns share one batch and keep their caches on the GPU; tokens and counts match WASM's", async ({ page }) => {
  test.setTimeout(300_000);
  // Three puzzles (their rows left-padded in one batch as their answers differ in length), two turns each (each
  // sample's cache kept between them).
  const scenario = (device: string) => ({
    mode: "sync",
    max_seq_len: 1024,
    max_rollout_turns: 2,
    max_new_tokens: 3,
    greedy: true,
    envs: { t: { env: "sliding_puzzle", config: {} } },
    dataset: { task_name: "t", size: 3, seed: 0, config: { size: 2, shuffle_moves: 2, max_moves: 5 } },
    policy: { kind: "model", model: "builtin:tiny", device },
  });
  const run = async (device: string) => {
    await page.goto("/");
    await setScenario(page, JSON.stringify(scenario(device)));
    await page.getByRole("button", { name: "Run" }).click();
    await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 250_000 });
    const result = JSON.parse((await page.getByTestId("result-json").textContent())!) as {
      samples: { message_log: { role: string; token_ids: number[] }[] }[];
      metrics: Record<string, number>;
    };
    return {
      turns: result.samples.map((s) => s.message_log.filter((m) => m.role === "assistant").map((m) => m.token_ids)),
      reused: result.metrics["lab/reused_tokens"],
      prefilled: result.metrics["lab/prefilled_tokens"],
    };
  };
  const webgpu = await run("webgpu");
  await expect(page.getByTestId("model-status")).toContainText("ready on WEBGPU");
  expect(webgpu.turns.flat().length).toBeGreaterThan(3);
  expect(webgpu.reused).toBeGreaterThan(0);
  expect(await run("wasm")).toEqual(webgpu);
});

test("auto picks WASM when the only WebGPU adapter is a software fallback, and says why", async ({ page }) => {
  await page.goto("/");
  const scenario = {
    mode: "async",
    max_seq_len: 512,
    max_rollout_turns: 1,
    max_new_tokens: 4,
    greedy: true,
    envs: { t: { env: "sliding_puzzle", config: {} } },
    samples: [{ task_name: "t", message_log: [{ role: "user", content: "hi" }] }],
    policy: { kind: "model", model: "builtin:tiny", device: "auto" },
  };
  await setScenario(page, JSON.stringify(scenario));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 60_000 });
  await expect(page.getByTestId("model-status")).toContainText("ready on WASM");
  await expect(page.getByTestId("model-status")).toContainText("the only WebGPU adapter is a software fallback");
});

// How fast it runs is the benchmarks' business; this test checks the choice of WASM and that the run finishes.
test("the default run, with Chromium offering a software WebGPU adapter: one click, WASM, finished", async ({ page }) => {
  test.setTimeout(150_000);
  await page.goto("/");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 120_000 });
  await expect(page.getByTestId("model-status")).toContainText("software fallback");
});
