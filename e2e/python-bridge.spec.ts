import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { expect, setScenario, test } from "./fixtures.js";

/**
 * A NeMo-RL-style Python environment class in the page, through the bridge (issue 18): `python -m
 * rollout_lab_bridge` serves docs/examples/word_game/word_game.py (a @ray.remote class); the lab connects from its
 * origin (CORS), runs it, shows the class's global_post_process_and_metrics in the Metrics tab, and shows an error
 * in the user's code with its Python traceback, on the sample.
 */

const root = join(import.meta.dirname, "..");
const status = (page: Page) => page.getByTestId("run-status");

/** Starts the bridge on a free port; resolves with the URL of its startup line. */
function startBridge(args: string[], cwd: string): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn("python3", ["-m", "rollout_lab_bridge", ...args, "--port", "0"], {
    cwd,
    env: { ...process.env, PYTHONPATH: join(root, "python"), PYTHONUNBUFFERED: "1" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /serving \S+ at (http:\/\/127\.0\.0\.1:\d+) /.exec(out);
      if (match) resolve({ url: match[1]!, process: child });
    });
    child.on("exit", (code) => reject(new Error(`the bridge exited with ${code}`)));
  });
}

test.describe("the Python bridge", () => {
  const bridges: ChildProcess[] = [];
  test.afterAll(() => bridges.forEach((b) => b.kill()));

  test("a @ray.remote word game from Python: connect, run, and its post-process metrics beside the rollout's", async ({ page, guard }) => {
    const game = await startBridge(["word_game:WordGameEnv", "--dataset", "word_game:make_dataset"], join(root, "docs/examples/word_game"));
    bridges.push(game.process);
    guard.allow(new URL(game.url).origin);
    await page.goto("/");
    await page.getByLabel("Environment", { exact: true }).selectOption("http");
    await expect(page.getByTestId("python-bridge-command")).toHaveText("python -m rollout_lab_bridge my_pkg.envs:MyEnv --port 8765");
    await page.getByLabel("Environment server URL").fill(game.url);
    await page.getByRole("button", { name: "Connect" }).click();
    await expect(page.getByTestId("remote-env-status")).toHaveText(/^Connected: WordGameEnv — Guess the secret five-letter word/);
    await expect(page.getByTestId("remote-env-bridge")).toContainText("Python environment word_game:WordGameEnv");
    await expect(page.getByTestId("remote-env-bridge")).toContainText("global_post_process_and_metrics after each run");

    const scenario = JSON.parse(readFileSync(join(root, "docs/examples/word_game/scenario.json"), "utf8"));
    for (const mode of ["sync", "async"]) {
      await setScenario(page, { ...scenario, mode, envs: { word_game: { env: "http", config: { url: game.url } } } });
      await page.getByRole("button", { name: "Run" }).click();
      // This mode's run, not the one before it (both say "finished").
      await expect(page.getByText(`The rollout's own metrics (${mode} path).`)).toBeVisible({ timeout: 30_000 });
      await expect(status(page)).toHaveText("finished");
      expect(await page.getByTestId("outcome").allTextContents()).toEqual(["solved", "solved", "solved"]);
      await expect(page.getByTestId("transcript")).toContainText("<environment>crane: _ _ G _ G (2 guesses left)</environment>");
      const table = page.getByTestId("environment-metrics");
      await expect(table.locator('[data-metric="word_game/word_game_solve_rate"]')).toContainText("1");
      await expect(table.locator('[data-metric="word_game/word_game_mean_turns"]')).toContainText("2.66667");
    }
  });

  test("an error in the user's Python step ends that sample with the traceback, shown with the sample", async ({ page, guard }) => {
    const dir = mkdtempSync(join(tmpdir(), "bridge-e2e-"));
    writeFileSync(
      join(dir, "boom_env.py"),
      [
        "class BoomEnv:",
        '    """Raises on its first step."""',
        "    def step(self, message_log_batch, metadata):",
        '        raise KeyError("board")',
        "",
      ].join("\n"),
    );
    const boom = await startBridge(["boom_env:BoomEnv"], dir);
    bridges.push(boom.process);
    guard.allow(new URL(boom.url).origin);
    await page.goto("/");
    await setScenario(page, {
      mode: "sync",
      max_seq_len: 500,
      max_rollout_turns: 2,
      envs: { boom: { env: "http", config: { url: boom.url } } },
      samples: [{ task_name: "boom", message_log: [{ role: "user", content: "go" }] }],
      policy: { kind: "scripted", responses: [["a"]] },
    });
    await page.getByRole("button", { name: "Run" }).click();
    await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
    const error = page.getByTestId("sample-error");
    await expect(error).toContainText(`${boom.url}/step answered HTTP 500: KeyError: 'board'`);
    await expect(error).toContainText("Traceback (most recent call last):");
    await expect(error).toContainText('boom_env.py", line 4, in step');
  });
});
