/** End to end: `npx tsx src/cli/regress.ts` on a temp copy of a small suite, with the committed goldens. */

import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuiltApp } from "../cli/build-app.js";
import { vulkanEnv } from "../policy/llm/software-vulkan.fixture.js";

const root = resolve(import.meta.dirname, "../..");
const NAMES = ["calculator-scripted-sync", "puzzle-oracle-sync"];

function regress(args: string[], timeout = 60_000, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile("npx", ["tsx", "src/cli/regress.ts", ...args], { cwd: root, timeout, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe("npm run regress (node backend)", () => {
  let dir: string;
  let suite: string;
  let out: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "regress-e2e-"));
    suite = join(dir, "suite.json");
    out = join(dir, "out");
    for (const name of NAMES) {
      await cp(join(root, "regress/scenarios", `${name}.json`), join(dir, "scenarios", `${name}.json`), { recursive: true });
      await cp(join(root, "regress/goldens", name), join(dir, "goldens", name), { recursive: true });
    }
    await writeFile(suite, JSON.stringify({ scenarios: NAMES.map((n) => `scenarios/${n}.json`), tolerances: {} }));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("passes against its goldens and writes transcripts, metrics and the HTML report", async () => {
    const { code, stdout } = await regress([suite, "--backend", "node", "--out", out]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ok +calculator-scripted-sync$/m);
    expect(stdout).toMatch(/^ok +puzzle-oracle-sync$/m);
    const samples = await readFile(join(out, "calculator-scripted-sync", "samples.jsonl"), "utf8");
    expect(samples).toBe(await readFile(join(dir, "goldens", "calculator-scripted-sync", "samples.jsonl"), "utf8"));
    expect(await readFile(join(out, "puzzle-oracle-sync", "metrics.json"), "utf8")).not.toContain("timing/");
    expect(await readFile(join(out, "report.html"), "utf8")).toContain("<td>ok</td>");
  }, 90_000);

  it("a replay whose saved run is missing or damaged is bad input (exit 2); an environment that fails as the scenario runs is a failed run (exit 1)", async () => {
    const scenario = JSON.parse(await readFile(join(dir, "scenarios", "calculator-scripted-sync.json"), "utf8"));
    const replay = join(dir, "replay-missing.json");
    await writeFile(join(dir, "scenarios", "replay-missing.json"), JSON.stringify({ ...scenario, policy: { kind: "replay", file: "../runs/gone.json" } }));
    await writeFile(replay, JSON.stringify({ scenarios: ["scenarios/replay-missing.json"], tolerances: {} }));
    const missing = await regress([replay, "--out", out]);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toMatch(/^BAD INPUT +replay-missing: policy\.file: cannot use '\.\.\/runs\/gone\.json': ENOENT/m);
    await mkdir(join(dir, "runs"), { recursive: true });
    await writeFile(join(dir, "runs", "gone.json"), '{"samples": [{"idx": "zero"}]}');
    const damaged = await regress([replay, "--out", out]);
    expect(damaged.code).toBe(2);
    expect(damaged.stdout).toMatch(/^BAD INPUT +replay-missing: policy\.file: cannot use '\.\.\/runs\/gone\.json': the saved run has/m);
    const env = Object.keys(scenario.envs)[0]!;
    const badConfig = { ...scenario, envs: { ...scenario.envs, [env]: { ...scenario.envs[env], config: { no_such_option: 1 } } } };
    await writeFile(join(dir, "scenarios", "bad-config.json"), JSON.stringify(badConfig));
    const configSuite = join(dir, "bad-config-suite.json");
    await writeFile(configSuite, JSON.stringify({ scenarios: ["scenarios/bad-config.json"], tolerances: {} }));
    const config = await regress([configSuite, "--out", out]);
    // (It may be the config or an outage of the environment's server: the runner cannot tell, so it is a failed run.)
    expect(config.stdout).toMatch(new RegExp(`^FAILED +bad-config: envs\\.${env}\\.config: `, "m"));
    expect(config.code).toBe(1);
  }, 90_000);

  it("runs only its shard", async () => {
    const { code, stdout } = await regress([suite, "--shard", "2/2", "--out", out]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ok +puzzle-oracle-sync$/m);
    expect(stdout).not.toContain("calculator-scripted-sync");
  }, 90_000);

  it("fails naming the scenario, the sample and the turn when the scripted response changes at turn 2", async () => {
    const path = join(dir, "scenarios", "calculator-scripted-sync.json");
    const scenario = JSON.parse(await readFile(path, "utf8"));
    expect(scenario.policy.responses[0][2]).toBe("16");
    scenario.policy.responses[0][2] = "17";
    await writeFile(path, JSON.stringify(scenario));
    const { code, stdout } = await regress([suite, "--out", out]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^REGRESSED +calculator-scripted-sync: text differs: sample idx 0, turn 2, message \d+ \(assistant\), content at char 1/m);
    expect(stdout).toMatch(/^ok +puzzle-oracle-sync$/m);
    expect(stdout).toMatch(/golden: 16/);
    expect(stdout).toMatch(/run: +17/);
    const html = await readFile(join(out, "report.html"), "utf8");
    expect(html).toContain("REGRESSED");
    expect(html).toContain("<mark>7</mark>");
  }, 90_000);

  it("fails on a changed environment config and on a missing golden, named", async () => {
    const path = join(dir, "scenarios", "puzzle-oracle-sync.json");
    const scenario = JSON.parse(await readFile(path, "utf8"));
    // Samples 0 and 1 come out the same; sample idx 2 gets another board, so its prompt differs.
    scenario.dataset.config.shuffle_moves = 9;
    await writeFile(path, JSON.stringify(scenario));
    await rm(join(dir, "goldens", "calculator-scripted-sync", "metrics.json"));
    const { code, stdout } = await regress([suite, "--out", out]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^REGRESSED +puzzle-oracle-sync: text differs: sample idx 2, turn 0, message 0 \(user\), content at char \d+/m);
    expect(stdout).toMatch(/^MISSING +calculator-scripted-sync: no golden metrics\.json/m);
  }, 90_000);

  it("--update rewrites the goldens and exits 0; then the run matches", async () => {
    expect((await regress([suite, "--update", "--out", out])).code).toBe(0);
    const { code, stdout } = await regress([suite, "--out", out]);
    expect(code).toBe(0);
    expect(stdout).toContain("all 2 scenarios match their goldens");
  }, 90_000);

  it("refuses --update with a browser backend, unknown backends and bad suites clearly", async () => {
    const wasm = await regress([suite, "--backend", "wasm", "--update"]);
    expect(wasm.code).toBe(2);
    expect(wasm.stderr).toContain("--update with --backend wasm: goldens come from the node backend");
    expect((await regress([suite, "--backend", "webgpu", "--update"])).code).toBe(2);
    const unknown = await regress([suite, "--backend", "cuda"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown backend 'cuda' (expected node, node-webgpu, wasm or webgpu)");
    expect((await regress([suite, "--backend", "node-webgpu", "--update"])).stderr).toContain("goldens come from the node backend");
    const bad = join(dir, "bad.json");
    await writeFile(bad, JSON.stringify({ scenarios: ["x.json"], tolerance: {} }));
    const invalid = await regress([bad]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain("tolerance: unknown key");
  }, 90_000);

  it("refuses report paths it cannot write before running anything, with exit status 2 (not 1, a regression)", async () => {
    const file = join(dir, "a-file");
    await writeFile(file, "");
    const folder = join(dir, "a-folder");
    await mkdir(folder, { recursive: true });
    const outIsFile = await regress([suite, "--out", file]);
    expect([outIsFile.code, outIsFile.stdout]).toEqual([2, ""]);
    expect(outIsFile.stderr).toContain(`error: --out ${file} is a file: the reports go into a folder there`);
    const junitIsFolder = await regress([suite, "--out", out, "--junit", folder]);
    expect([junitIsFolder.code, junitIsFolder.stdout]).toEqual([2, ""]);
    expect(junitIsFolder.stderr).toContain(`error: --junit ${folder} is a folder: name the file to write`);
    const merge = await regress(["merge", out, "--out", file]);
    expect(merge.code).toBe(2);
    expect(merge.stderr).toContain("is a file");
    // Below a file: no folder can be made there, so the run is refused before it starts.
    for (const flag of ["--junit", "--summary", "--out"]) {
      const below = await regress([suite, "--out", flag === "--out" ? join(file, "sub") : out, ...(flag === "--out" ? [] : [flag, join(file, "x.xml")])]);
      expect([below.code, below.stdout]).toEqual([2, ""]);
      expect(below.stderr).toContain(`cannot be written: ${file} is a file, not a folder`);
    }
    const envFile = await regress([suite, "--out", out, "--environments", file]);
    expect([envFile.code, envFile.stdout]).toEqual([2, ""]);
    expect(envFile.stderr).toContain(`--environments ${file}: a file, not a folder`);
  }, 90_000);

  it("refuses --out on the goldens folder (the runs would overwrite the goldens they are compared with)", async () => {
    const golden = join(dir, "goldens", "calculator-scripted-sync", "samples.jsonl");
    const before = await readFile(golden, "utf8");
    const { code, stdout, stderr } = await regress([suite, "--out", join(dir, "goldens")]);
    expect([code, stdout]).toEqual([2, ""]);
    expect(stderr).toContain("is the goldens folder");
    expect(await readFile(golden, "utf8")).toBe(before);
  }, 90_000);

  it("through the package's command too, an error it did not expect exits 2; a reader closing its output early changes nothing", async () => {
    // bin/rollout-lab.mjs dispatches to regress's own wrapper (it called main, and crashed with exit 1). The error:
    // report.json is a folder, found only when the report is written.
    const blocked = join(dir, "out-blocked");
    await mkdir(join(blocked, "report.json"), { recursive: true });
    const viaBin = await new Promise<{ code: number; stderr: string }>((done) => {
      execFile("node", ["bin/rollout-lab.mjs", "regress", suite, "--out", blocked, "--shard", "2/2"], { cwd: root, timeout: 60_000 }, (error, _stdout, stderr) =>
        done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }),
      );
    });
    expect(viaBin.code).toBe(2);
    expect(viaBin.stderr).toMatch(/^error: EISDIR: illegal operation on a directory/);
    // `| head -c 1`: the reader goes after the first byte; the run's status is still the comparison's.
    const closed = await new Promise<number | null>((done) => {
      const child = spawn("npx", ["tsx", "src/cli/regress.ts", suite, "--out", out], { cwd: root, stdio: ["ignore", "pipe", "ignore"] });
      child.stdout.once("data", () => child.stdout.destroy());
      child.on("exit", (code) => done(code));
    });
    expect(closed).toBe(0);
  }, 120_000);
});

describe("npm run regress -- merge (shards of the node backend)", () => {
  // Shard 1/2 runs calculator-scripted-sync and calculator-oracle-async, shard 2/2 puzzle-oracle-sync.
  const MERGE_NAMES = ["calculator-scripted-sync", "puzzle-oracle-sync", "calculator-oracle-async"];
  let dir: string;
  let suite: string;
  const out = (name: string) => join(dir, "out", name);
  const withoutSeconds = async (folder: string) => ({ ...JSON.parse(await readFile(join(folder, "report.json"), "utf8")), seconds: 0 });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "regress-merge-"));
    suite = join(dir, "suite.json");
    for (const name of MERGE_NAMES) {
      await cp(join(root, "regress/scenarios", `${name}.json`), join(dir, "scenarios", `${name}.json`));
      await cp(join(root, "regress/goldens", name), join(dir, "goldens", name), { recursive: true });
    }
    await writeFile(suite, JSON.stringify({ scenarios: MERGE_NAMES.map((n) => `scenarios/${n}.json`), tolerances: { "env/reward": 0.001 } }));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("merges the shards' reports into the unsharded run's report (report.json apart from seconds, report.html, summary)", async () => {
    const [whole, one, two] = await Promise.all([
      regress([suite, "--out", out("whole")]),
      regress([suite, "--shard", "1/2", "--out", out("s1")]),
      regress([suite, "--shard", "2/2", "--out", out("s2")]),
    ]);
    expect([whole.code, one.code, two.code]).toEqual([0, 0, 0]);
    expect(JSON.parse(await readFile(join(out("s2"), "report.json"), "utf8")).shard).toEqual({ index: 2, count: 2 });
    const merged = await regress(["merge", out("s2"), out("s1"), "--out", out("merged")]);
    expect(merged.stderr).not.toContain("error");
    expect(merged.code).toBe(0);
    expect(merged.stdout).toContain("2 shards merged");
    const summary = (stdout: string) => stdout.replace(/^report: .*\n/m, "");
    expect(summary(merged.stdout)).toBe(summary(whole.stdout));
    expect(summary(merged.stdout)).toContain("all 3 scenarios match their goldens");
    expect(await withoutSeconds(out("merged"))).toEqual(await withoutSeconds(out("whole")));
    expect(await readFile(join(out("merged"), "report.html"), "utf8")).toBe(await readFile(join(out("whole"), "report.html"), "utf8"));
  }, 90_000);

  it("fails the merge naming the scenario when one shard regressed", async () => {
    const path = join(dir, "scenarios", "calculator-scripted-sync.json");
    const scenario = JSON.parse(await readFile(path, "utf8"));
    scenario.policy.responses[0][2] = "17";
    await writeFile(path, JSON.stringify(scenario));
    expect((await regress([suite, "--shard", "1/2", "--out", out("s1")])).code).toBe(1);
    const { code, stdout } = await regress(["merge", out("s1"), out("s2"), "--out", out("merged")]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^REGRESSED +calculator-scripted-sync: text differs: sample idx 0, turn 2, message \d+ \(assistant\), content at char 1/m);
    expect(stdout).toMatch(/^ok +puzzle-oracle-sync$/m);
    expect(stdout).toContain("1 of 3 scenarios regressed, are flaky or lack a golden");
    const html = await readFile(join(out("merged"), "report.html"), "utf8");
    expect(html).toContain("<mark>7</mark>");
    expect(JSON.parse(await readFile(join(out("merged"), "report.json"), "utf8")).comparisons[0]).toMatchObject({ name: "calculator-scripted-sync", status: "regressed" });
  }, 90_000);

  // A duplicated shard and the other mismatches: merge.test.ts.
  it("refuses a missing or foreign shard, a folder without a report and bad usage with exit status 2, naming the problem", async () => {
    const foreign = out("wasm");
    const report = JSON.parse(await readFile(join(out("s2"), "report.json"), "utf8"));
    await mkdir(foreign, { recursive: true });
    await writeFile(join(foreign, "report.json"), JSON.stringify({ ...report, backend: "wasm" }));
    const results = await Promise.all([
      regress(["merge", out("s1"), "--out", out("merged")]),
      regress(["merge", out("s1"), foreign, "--out", out("merged")]),
      regress(["merge", out("s1"), join(dir, "nowhere"), "--out", out("merged")]),
      regress(["merge", out("s1"), out("s2"), "--out", out("s1")]),
    ]);
    expect(results.map((r) => r.code)).toEqual([2, 2, 2, 2]);
    const [missing, wasm, nowhere, overwrite] = results.map((r) => r.stderr);
    expect(missing).toContain("error: cannot merge: shard 2/2 is missing");
    expect(wasm).toContain(`error: cannot merge: ${foreign} ran on backend wasm (default tolerance 0.001, 1 run each) but ${out("s1")} on backend node`);
    expect(nowhere).toContain(`error: cannot merge: ${join(dir, "nowhere", "report.json")} does not exist`);
    expect(overwrite).toContain(`error: --out ${out("s1")} is one of the shard folders`);
    expect(overwrite).toContain("rollout-lab regress merge <shard-out-dir>... [--out <dir>]");
  }, 90_000);
});

const BROWSER_NAMES = ["calculator-scripted-sync", "puzzle-tiny-model-greedy"];
const built = existsSync(join(root, "dist", "index.html"));

describe("npm run regress --backend wasm (the built app in headless Chromium)", () => {
  // A dist/ older than its sources is rebuilt by the command (build-app.ts); done here first, on its own clock, so the
  // command's time below is the run's alone.
  beforeAll(async () => {
    if (built) await ensureBuiltApp(root, () => undefined);
  }, 300_000);

  it.skipIf(!built)(
    "matches Node's goldens (floats within the default tolerance), a replay scenario included; keeps a failing scenario's trace" +
      (built ? "" : " [skipped: dist/index.html is missing; run npm run build first]"),
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "regress-wasm-"));
      try {
        for (const name of BROWSER_NAMES) {
          await cp(join(root, "regress/scenarios", `${name}.json`), join(dir, "scenarios", `${name}.json`));
          await cp(join(root, "regress/goldens", name), join(dir, "goldens", name), { recursive: true });
        }
        const replay = JSON.parse(await readFile(join(root, "regress/scenarios/calculator-scripted-sync.json"), "utf8"));
        replay.policy = { kind: "replay", file: "../runs/saved.json" };
        await writeFile(join(dir, "scenarios", "replayed.json"), JSON.stringify(replay));
        // The run to replay is the scripted scenario's golden; replaying it must give that golden again.
        const golden = join(root, "regress/goldens/calculator-scripted-sync");
        const samples = (await readFile(join(golden, "samples.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
        await mkdir(join(dir, "runs"), { recursive: true });
        await writeFile(join(dir, "runs", "saved.json"), JSON.stringify({ samples, metrics: JSON.parse(await readFile(join(golden, "metrics.json"), "utf8")) }));
        await cp(golden, join(dir, "goldens", "replayed"), { recursive: true });
        // A scenario whose golden says otherwise: it fails, and its page's Playwright trace is kept.
        await cp(join(dir, "scenarios", "calculator-scripted-sync.json"), join(dir, "scenarios", "perturbed.json"));
        await mkdir(join(dir, "goldens", "perturbed"), { recursive: true });
        await writeFile(join(dir, "goldens", "perturbed", "samples.jsonl"), (await readFile(join(golden, "samples.jsonl"), "utf8")).replace("[3, 5, sum]", "[3, 6, sum]"));
        await cp(join(golden, "metrics.json"), join(dir, "goldens", "perturbed", "metrics.json"));
        const suite = join(dir, "suite.json");
        const scenarios = [...BROWSER_NAMES, "replayed", "perturbed"].map((n) => `scenarios/${n}.json`);
        await writeFile(suite, JSON.stringify({ scenarios, tolerances: {} }));
        const { code, stdout, stderr } = await regress([suite, "--backend", "wasm", "--out", join(dir, "out")], 110_000);
        expect(stderr + stdout).not.toContain("FAILED");
        expect(code).toBe(1);
        expect(stdout).toMatch(/^REGRESSED +perturbed: text differs: sample idx 0, turn 0, message 1 \(assistant\), content at char 4$/m);
        const trace = await readFile(join(dir, "out", "perturbed", "trace.zip"));
        expect(trace.subarray(0, 2).toString()).toBe("PK"); // a zip: Playwright's trace format
        expect(trace.includes("trace.trace")).toBe(true);
        expect(existsSync(join(dir, "out", "calculator-scripted-sync", "trace.zip"))).toBe(false);
        expect(stdout).toMatch(/^ok +calculator-scripted-sync$/m);
        expect(stdout).toMatch(/^ok +puzzle-tiny-model-greedy(: floats within \S+ of the golden \(generation_logprobs\))?$/m);
        expect(stdout).toMatch(/^ok +replayed$/m);
        expect(stdout).toContain("1 of 4 scenarios regressed, are flaky or lack a golden");
        expect(stdout).toContain("backend wasm");
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});

const vulkan = vulkanEnv();

describe("npm run regress --backend node-webgpu (model policies on WebGPU in Node, through Dawn)", () => {
  it.skipIf(!vulkan)(
    "matches Node's goldens, the model's tokens exactly and its floats within the default tolerance" + (vulkan ? "" : " [skipped: no Vulkan driver]"),
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "regress-node-webgpu-"));
      try {
        const names = ["puzzle-tiny-model-greedy", "calculator-scripted-sync"];
        for (const name of names) {
          await cp(join(root, "regress/scenarios", `${name}.json`), join(dir, "scenarios", `${name}.json`));
          await cp(join(root, "regress/goldens", name), join(dir, "goldens", name), { recursive: true });
        }
        const suite = join(dir, "suite.json");
        await writeFile(suite, JSON.stringify({ scenarios: names.map((n) => `scenarios/${n}.json`), tolerances: {} }));
        const { code, stdout, stderr } = await regress([suite, "--backend", "node-webgpu", "--out", join(dir, "out")], 280_000, vulkan!);
        expect(code).toBe(0);
        expect(stdout).toMatch(/^ok +puzzle-tiny-model-greedy(: floats within \S+ of the golden \(generation_logprobs\))?$/m);
        expect(stdout).toMatch(/^ok +calculator-scripted-sync$/m);
        expect(stdout).toContain("backend node-webgpu");
        expect(JSON.parse(await readFile(join(dir, "out", "report.json"), "utf8")).backend).toBe("node-webgpu");
        if (vulkan!.VK_ICD_FILENAMES) expect(stderr).toContain("warning: the WebGPU adapter is a software one");
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    300_000,
  );
});
