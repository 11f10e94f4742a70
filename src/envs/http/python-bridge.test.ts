// The Python environment bridge end to end (issue 18): `python -m rollout_lab_bridge` serves a NeMo-RL-style class
// (docs/examples/word_game/word_game.py: @ray.remote, through the bridge's stand-in ray module where Ray is absent)
// and the lab steps it over HTTP; the same scenario through the equivalent JavaScript module (word_game.js) gives
// the same transcript, in both rollout modes. Its global_post_process_and_metrics comes back after the run, and an
// error in the user's code fails the samples of that call with the Python traceback while the bridge keeps serving.
// Skipped, and said so, where there is no python3.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvironmentMetrics } from "../../scenario/environment-metrics.js";
import { withoutTiming } from "../../scenario/result.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import { environmentLookup } from "../index.js";
import { environmentFromModule } from "../user/module.js";
import { fetchRemoteInfo } from "./index.js";

const root = join(import.meta.dirname, "../../..");
const gameDir = join(root, "docs/examples/word_game");
const hasPython = spawnSync("python3", ["--version"]).status === 0;
if (!hasPython) console.warn("python3 is not on the PATH: the Python bridge's end-to-end tests are skipped");

/** Starts the bridge on a free port in `cwd`; resolves with its URL from the startup line. */
async function startBridge(args: string[], cwd: string): Promise<{ url: string; lines: string[]; process: ChildProcess }> {
  const child = spawn("python3", ["-m", "rollout_lab_bridge", ...args, "--port", "0"], {
    cwd,
    env: { ...process.env, PYTHONPATH: join(root, "python"), PYTHONUNBUFFERED: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const done = out.split("\n");
      out = done.pop()!;
      for (const line of done) {
        lines.push(line);
        const match = / at (http:\/\/127\.0\.0\.1:\d+) /.exec(line);
        if (match) resolve(match[1]!);
      }
    });
    child.on("exit", (code) => reject(new Error(`the bridge exited with ${code}: ${stderr}`)));
  });
  return { url, lines, process: child };
}

const CALL = (word: string) => `<guess>${word}</guess>`;
/** A result without its wall-clock metrics (the only fields two runs may differ in). */
const untimed = (r: { samples: unknown[]; metrics: Record<string, unknown> }) => ({ ...r, metrics: withoutTiming(r.metrics) });
/** Seed 1 gives the secrets evade, heath, karma: solved on the second guess; a bad answer then a miss; out of guesses. */
const wordGame = (mode: "sync" | "async", envs: Record<string, unknown>) =>
  parseScenario({
    mode,
    max_seq_len: 2000,
    max_rollout_turns: 4,
    envs,
    dataset: { task_name: "word_game", size: 3, seed: 1, config: { max_guesses: 2 } },
    policy: {
      kind: "scripted",
      responses: [
        [CALL("crane"), CALL("evade")],
        ["I think it is heath", CALL("heart"), CALL("hears")],
        [CALL("sissy"), CALL("llama")],
      ],
    },
  });

describe.skipIf(!hasPython)("the Python bridge serving a NeMo-RL-style environment class", () => {
  let bridge: Awaited<ReturnType<typeof startBridge>>;
  beforeAll(async () => {
    bridge = await startBridge(["word_game:WordGameEnv", "--dataset", "word_game:make_dataset"], gameDir);
  }, 60_000);
  afterAll(() => void bridge?.process.kill());

  it("says what it serves: the startup line with the URL, and /info from the class", async () => {
    expect(bridge.lines.at(-1)).toMatch(/^rollout-lab-bridge: serving word_game:WordGameEnv at http:\/\/127\.0\.0\.1:\d+ /);
    const info = await fetchRemoteInfo(bridge.url);
    expect(info).toMatchObject({ title: "WordGameEnv", post_process: true, bridge: { target: "word_game:WordGameEnv" } });
    expect(info.description).toContain("Guess the secret five-letter word");
    expect(["ray", "stand-in"]).toContain(info.bridge?.ray);
  });

  for (const mode of ["sync", "async"] as const) {
    it(`${mode}: the same transcript through the bridge as through the JavaScript module`, async () => {
      const module = environmentFromModule(await import(pathToFileURL(join(gameDir, "word_game.js")).href), "word_game.js");
      const viaModule = await runScenario(wordGame(mode, { word_game: { env: "word_game", config: {} } }), { environments: environmentLookup([module]) });
      const asked: { reports: EnvironmentMetrics[] } = { reports: [] };
      const viaBridge = await runScenario(wordGame(mode, { word_game: { env: "http", config: { url: bridge.url } } }), {
        onEnvironmentMetrics: (r) => void (asked.reports = r),
      });
      expect(untimed(viaBridge)).toEqual(untimed(viaModule));
      expect(viaBridge.samples.map((s) => [s.total_reward, s.termination])).toEqual([
        [1, "terminated"],
        [0, "terminated"],
        [0, "terminated"],
      ]);
      expect(viaBridge.samples[2]!.message_log.at(-1)!.content).toBe("<environment>llama: _ _ Y G G (no guesses left; it was karma)</environment>\n");
      expect(asked.reports).toEqual([{ task: "word_game", metrics: { word_game_solve_rate: 1 / 3, word_game_mean_turns: 7 / 3 } }]);
    }, 60_000);
  }
});

describe.skipIf(!hasPython)("an error in the user's Python code", () => {
  let bridge: Awaited<ReturnType<typeof startBridge>>;
  let dir = "";
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "bridge-boom-"));
    writeFileSync(
      join(dir, "boom_env.py"),
      [
        "class BoomEnv:",
        '    """Answers every turn; a sample whose metadata says boom raises."""',
        "    def step(self, message_log_batch, metadata):",
        "        for meta in metadata:",
        '            if meta and meta.get("boom"):',
        '                raise ValueError("the board is broken")',
        "        n = len(metadata)",
        '        return ([{"role": "environment", "content": "ok"}] * n, [None] * n, None, [1.0] * n, [True] * n, None)',
        "",
      ].join("\n"),
    );
    bridge = await startBridge(["boom_env:BoomEnv"], dir);
  }, 60_000);
  afterAll(() => void bridge?.process.kill());

  it("fails the samples of that call with the Python traceback; the bridge keeps serving", async () => {
    const scenario = parseScenario({
      mode: "async",
      max_seq_len: 500,
      max_rollout_turns: 2,
      envs: { boom: { env: "http", config: { url: bridge.url } } },
      samples: [{ boom: true }, { boom: false }].map((extra) => ({ task_name: "boom", message_log: [{ role: "user", content: "go" }], extra_env_info: extra })),
      policy: { kind: "scripted", responses: [["a"], ["b"]] },
    });
    const result = await runScenario(scenario);
    const [broken, fine] = result.samples;
    expect(broken!.termination).toBe("error");
    expect(broken!.error).toContain(`${bridge.url}/step answered HTTP 500: ValueError: the board is broken`);
    expect(broken!.error).toContain("Traceback (most recent call last):");
    expect(broken!.error).toMatch(/boom_env\.py", line 6, in step/);
    expect([fine!.total_reward, fine!.termination]).toEqual([1, "terminated"]);
    const again = await runScenario({ ...scenario, samples: [scenario.samples![1]!] });
    expect(again.samples[0]!.total_reward).toBe(1);
  }, 60_000);
});
