import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, normalize, resolve } from "node:path";
import { expect, test, setScenario } from "./fixtures.js";

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

/** A stand-in for the Hugging Face hub on localhost: the built-in model in hub layout, 404 for anything else. */
async function startStandInHub(): Promise<{ server: Server; origin: string; requested: string[] }> {
  const requested: string[] = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url!, "http://x").pathname);
    requested.push(path);
    const match = /^\/stand-in\/tiny-model\/resolve\/main\/(.+)$/.exec(path);
    const file = match ? normalize(join(builtinTiny, match[1]!)) : "";
    const headers = { "Access-Control-Allow-Origin": "*", "Cross-Origin-Resource-Policy": "cross-origin" };
    if (req.method === "OPTIONS") return res.writeHead(204, { ...headers, "Access-Control-Allow-Headers": "*" }).end();
    if (!match || !file.startsWith(builtinTiny) || !existsSync(file) || !statSync(file).isFile()) return res.writeHead(404, headers).end("not found");
    res.writeHead(200, { ...headers, "Content-Length": statSync(file).size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requested };
}

test("a hub id loads from the hub address (a stand-in hub on localhost)", async ({ page, guard }) => {
  const hub = await startStandInHub();
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
  const hub = await startStandInHub();
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
