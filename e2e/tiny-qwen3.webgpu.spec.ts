/**
 * builtin:tiny-qwen3 on WebGPU in the page (issue 17 item 1): the model with Qwen3's real vocabulary loads on a WebGPU
 * adapter (SwiftShader here: correct, slow) and generates; its tokens are named in Qwen3's vocabulary and the template
 * check runs in the worker with its tokenizer. Tokens are not compared with WASM's: the two backends round
 * differently, and a random model's greedy choice can turn on the last bit.
 */

import { expect, setScenario, test } from "./fixtures.js";

test("builtin:tiny-qwen3 loads and generates on WebGPU; its turns are Qwen3 tokens, checked with its tokenizer", async ({ page }) => {
  test.setTimeout(300_000);
  await page.goto("/");
  await setScenario(page, {
    mode: "sync",
    max_seq_len: 2048,
    max_rollout_turns: 1,
    max_new_tokens: 6,
    greedy: true,
    envs: { p: { env: "sliding_puzzle", config: {} } },
    dataset: { task_name: "p", size: 1, seed: 4, config: { size: 2, shuffle_moves: 3, max_moves: 5 } },
    policy: { kind: "model", model: "builtin:tiny-qwen3", device: "webgpu" },
  });
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("model-status")).toContainText("ready on WEBGPU", { timeout: 240_000 });
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 240_000 });
  const result = JSON.parse((await page.getByTestId("result-json").textContent())!) as { samples: { message_log: { role: string; token_ids: number[] }[] }[] };
  const turn = result.samples[0]!.message_log.find((m) => m.role === "assistant")!;
  expect(turn.token_ids.length).toBeGreaterThan(0);
  // Ids of Qwen3's vocabulary: beyond the byte-level one's 265, below Qwen3's 151,936.
  expect(turn.token_ids.every((id) => id >= 0 && id < 151_936)).toBe(true);
  expect(turn.token_ids.some((id) => id >= 265)).toBe(true);
  await page.getByRole("tab", { name: "Tokens" }).click();
  const check = page.getByTestId("token-check");
  await expect(check).toHaveAttribute("data-state", /^(consistent|drift)$/, { timeout: 60_000 });
  await expect(check).toContainText("tokenizer builtin:tiny-qwen3");
});
