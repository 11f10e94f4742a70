/** The Node commands' user environments (./checkout-environments.ts): what a folder of modules gives, and what it leaves out. */

import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { environmentLookup } from "../envs/index.js";
import { runScenario } from "../scenario/run.js";
import { parseScenario } from "../scenario/schema.js";
import { loadCheckoutEnvironments } from "./checkout-environments.js";

const root = resolve(import.meta.dirname, "../..");
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "checkout-envs-"));
  const starter = await readFile(join(root, "environments/number_guess.js"), "utf8");
  const named = (name: string) => starter.replaceAll('"number_guess"', JSON.stringify(name));
  await writeFile(join(dir, "a_calc.js"), named("calculator"));
  await writeFile(join(dir, "b_twin.js"), named("twin"));
  await writeFile(join(dir, "c_twin.js"), named("twin"));
  await writeFile(join(dir, "d_solo.js"), named("solo"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("loadCheckoutEnvironments", () => {
  it("leaves out, naming each file, a module named like a built-in and every module of a name two share; the others load", async () => {
    const warnings: string[] = [];
    const loaded = await loadCheckoutEnvironments(dir, (m) => warnings.push(m));
    expect(loaded.map((d) => d.name)).toEqual(["solo"]);
    expect(warnings).toEqual([
      `warning: ${join(dir, "a_calc.js")} was not loaded: its environment is named 'calculator', a built-in environment's name (give it another)`,
      `warning: ${join(dir, "b_twin.js")} and ${join(dir, "c_twin.js")} are all named 'twin': none of them was loaded (rename all but one)`,
    ]);
  });
});

describe("a module in its own thread", () => {
  let own: string;
  beforeAll(async () => {
    own = await mkdtemp(join(tmpdir(), "thread-envs-"));
    // Its step loops for ever on "loop" and ends its thread on "exit": either would have held or ended the process.
    await writeFile(
      join(own, "stubborn.js"),
      `export default {
  name: "stubborn",
  create() {
    return { globalPostProcessAndMetrics(batch) { return [batch, { samples: batch.total_reward.length }]; }, step(logs) {
      const last = logs[0].at(-1).content;
      if (last === "loop") for (;;) {}
      if (last === "exit") process.exit(3);
      if (last === "hang") return new Promise(() => {});
      if (last === "loop, then exit") { const until = Date.now() + 2300; while (Date.now() < until) {} process.exit(4); }
      return { observations: logs.map(() => ({ role: "environment", content: "ok " + last })), metadata: logs.map(() => null),
        next_stop_strings: null, rewards: logs.map(() => 1), terminateds: logs.map(() => true), answers: null };
    } };
  },
  generateDataset() { return []; },
};
`,
    );
  });
  afterAll(async () => {
    await rm(own, { recursive: true, force: true });
  });

  it("a step stuck in a synchronous loop, or one that ends the thread, fails its sample; the module is started again for the next", async () => {
    const warnings: string[] = [];
    const environments = environmentLookup(await loadCheckoutEnvironments(own, (m) => warnings.push(m)));
    const run = (reply: string) =>
      runScenario(
        parseScenario({
          mode: "sync",
          max_seq_len: 512,
          max_rollout_turns: 1,
          env_step_timeout_ms: 1000,
          envs: { stubborn: { env: "stubborn" } },
          samples: [{ task_name: "stubborn", message_log: [{ role: "user", content: "go" }], extra_env_info: {} }],
          policy: { kind: "scripted", responses: [[reply]] },
        }),
        { environments },
      ).then((r) => r.samples[0]!);
    const observation = (sample: { message_log: { role: string; content: string }[] }) => sample.message_log.at(-1)!.content;

    expect(observation(await run("fine"))).toBe("ok fine");
    // Its instance's global_post_process_and_metrics crosses the thread too (npm run rollout -- --env-metrics).
    const reports: unknown[] = [];
    await runScenario(
      parseScenario({
        mode: "sync",
        max_seq_len: 512,
        max_rollout_turns: 1,
        envs: { stubborn: { env: "stubborn" } },
        samples: [{ task_name: "stubborn", message_log: [{ role: "user", content: "go" }], extra_env_info: {} }],
        policy: { kind: "scripted", responses: [["fine"]] },
      }),
      { environments, onEnvironmentMetrics: (r) => reports.push(...r) },
    );
    expect(reports).toEqual([{ task: "stubborn", metrics: { samples: 1 } }]);
    const looped = await run("loop");
    expect(looped.termination).toBe("error");
    expect(looped.error).toBe("environment 'stubborn' step timed out after 1000 ms");
    // The thread did not answer its ping: started again from the same file, and the next run steps it.
    await expect.poll(() => warnings.some((w) => w.includes("stopped answering after a step ran past its deadline")), { timeout: 10_000 }).toBe(true);
    expect(observation(await run("again"))).toBe("ok again");

    const exited = await run("exit");
    expect(exited.termination).toBe("error");
    expect(exited.error).toMatch(/ended its thread \(exit code 3\)/);
    expect(observation(await run("after"))).toBe("ok after");

    // Busy past its deadline, then gone while its ping is unanswered: started again once, and it works after.
    expect((await run("loop, then exit")).termination).toBe("error");
    await expect.poll(() => warnings.some((w) => w.includes("exit code 4")), { timeout: 10_000 }).toBe(true);
    expect(observation(await run("after both"))).toBe("ok after both");
    expect(warnings.filter((w) => w.includes("could not be started again"))).toEqual([]);
  }, 60_000);

  it("a step whose promise never settles ends its sample at the deadline, and the command still exits", async () => {
    const scenario = join(own, "hang.json");
    await writeFile(
      scenario,
      JSON.stringify({
        mode: "sync",
        max_seq_len: 512,
        max_rollout_turns: 1,
        env_step_timeout_ms: 500,
        envs: { stubborn: { env: "stubborn" } },
        samples: [{ task_name: "stubborn", message_log: [{ role: "user", content: "go" }], extra_env_info: {} }],
        policy: { kind: "scripted", responses: [["hang"]] },
      }),
    );
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((done) => {
      execFile("npx", ["tsx", "src/cli/rollout.ts", scenario, "--environments", own], { cwd: root, timeout: 60_000 }, (error, out) =>
        done({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout: out }),
      );
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout).samples[0].error).toBe("environment 'stubborn' step timed out after 500 ms");
  }, 90_000);
});
