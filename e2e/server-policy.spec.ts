import { startStandInServer, type StandInServer } from "../src/cli/stand-in-server.js";
import { expect, setScenario, test } from "./fixtures.js";

// The page's server policy against the repo's stand-in inference server (the built-in model over vLLM's completions
// API, with CORS headers) on localhost, which the built site's Content-Security-Policy allows.
let server: StandInServer;
let failNext = 0;
test.beforeAll(async () => {
  server = await startStandInServer({ model: "builtin:tiny", fault: () => (failNext-- > 0 ? { status: 500 } : null) });
});
test.afterAll(async () => {
  await server?.close();
});

type Result = { samples: { termination: string; error?: string; message_log: { role: string; token_ids: number[] }[] }[]; metrics: Record<string, number> };

const scenario = (policy: Record<string, unknown>) => ({
  mode: "async",
  max_seq_len: 2048,
  max_rollout_turns: 2,
  max_new_tokens: 8,
  greedy: true,
  envs: { t: { env: "sliding_puzzle", config: {} } },
  dataset: { task_name: "t", size: 3, seed: 4, config: { size: 2, shuffle_moves: 2, max_moves: 5 } },
  policy,
});

async function run(page: import("@playwright/test").Page, policy: Record<string, unknown>): Promise<Result> {
  await page.goto("/");
  await setScenario(page, JSON.stringify(scenario(policy)));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 120_000 });
  return JSON.parse((await page.getByTestId("result-json").textContent())!) as Result;
}

const assistantTokens = (result: Result) => result.samples.map((s) => s.message_log.filter((m) => m.role === "assistant").map((m) => m.token_ids));

test("the page runs its rollout on an inference server (the stand-in): the tab's own model's tokens, within the concurrency limit", async ({ page, guard }) => {
  test.setTimeout(240_000);
  guard.allow(new URL(server.url).origin);
  server.resetStats();
  const served = await run(page, { kind: "server", base_url: server.url, model: "builtin:tiny", max_concurrency: 2 });
  const turns = assistantTokens(served).flat().length;
  expect(turns).toBeGreaterThanOrEqual(3);
  expect(server.stats.requests).toBe(turns);
  expect(server.stats.maxInFlight).toBeLessThanOrEqual(2);
  expect(served.metrics["lab/server_requests"]).toBe(turns);
  const inTab = await run(page, { kind: "model", model: "builtin:tiny", device: "wasm" });
  expect(assistantTokens(served)).toEqual(assistantTokens(inTab));
});

test("a server error ends that sample with the URL and the status, and the others finish", async ({ page, guard }) => {
  test.setTimeout(240_000);
  guard.allow(new URL(server.url).origin);
  failNext = 1;
  const result = await run(page, { kind: "server", base_url: server.url, model: "builtin:tiny", max_concurrency: 1, max_retries: 0 });
  const errors = result.samples.filter((s) => s.termination === "error");
  expect(errors).toHaveLength(1);
  expect(errors[0]!.error).toContain(`${server.url}/completions`);
  expect(errors[0]!.error).toContain("500");
  expect(result.samples.filter((s) => s.termination !== "error").length).toBe(2);
});
