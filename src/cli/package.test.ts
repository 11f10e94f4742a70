/**
 * The package as another repository uses it: `npm pack`, the tarball installed into a fresh project that has
 * nothing else of ours (its own environment module and suite), then `npx rollout-lab …` there: goldens written
 * with `--update`, a run that passes against them with `--junit`, a run in the browser (the lab built on first
 * use inside the installed package, the project's module loaded into the page). Needs the npm registry (or npm's
 * cache) for the package's dependencies, as any install does.
 */

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const chromium = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

function sh(command: string, args: string[], cwd: string, timeout = 240_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const env = { ...process.env, ONNXRUNTIME_NODE_INSTALL: "skip", CHROMIUM_PATH: chromium };
    execFile(command, args, { cwd, timeout, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The project's own environment: say the word the prompt asks for; 0.25 a try, so rewards are floats. */
const WORD_ECHO = `
export default {
  name: "word_echo",
  title: "Word echo",
  defaultTaskName: "word_echo",
  create() {
    return {
      step(logs, metadata) {
        const out = logs.map((log, i) => {
          const said = log[log.length - 1].content;
          const hit = said.includes(metadata[i].word);
          const tries = metadata[i].tries + 1;
          return { hit, tries, obs: hit ? "yes" : "no, say " + metadata[i].word };
        });
        return {
          observations: out.map((o) => ({ role: "environment", content: o.obs })),
          metadata: out.map((o, i) => (o.hit ? null : { ...metadata[i], tries: o.tries })),
          next_stop_strings: out.map(() => null),
          rewards: out.map((o) => (o.hit ? 1 / (o.tries + 3) : 0)),
          terminateds: out.map((o) => o.hit),
          answers: null,
        };
      },
    };
  },
  generateDataset({ size, taskName }) {
    const words = ["apple", "river", "stone", "cloud"];
    return Array.from({ length: size }, (_, idx) => ({
      task_name: taskName,
      idx,
      message_log: [{ role: "user", content: "<|im_start|>user\\nSay " + words[idx % 4] + ".<|im_end|>\\n<|im_start|>assistant\\n" }],
      extra_env_info: { word: words[idx % 4], tries: 0 },
    }));
  },
};
`;

const SCRIPTED = {
  mode: "sync",
  max_seq_len: 512,
  max_rollout_turns: 3,
  envs: { word_echo: { env: "word_echo", config: {} } },
  dataset: { task_name: "word_echo", size: 3, seed: 0, config: {} },
  policy: { kind: "scripted", responses: [["apple"], ["rain", "river"], ["rock", "pebble", "stone"]] },
};

const MODEL = { ...SCRIPTED, max_new_tokens: 8, greedy: true, policy: { kind: "model", model: "builtin:tiny", seed: 0 } };

describe("rollout-lab as a package installed into another project", () => {
  let dir: string;
  let project: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rollout-lab-package-"));
    const packed = await sh("npm", ["pack", "--pack-destination", dir], root, 120_000);
    expect(packed.code, packed.stderr).toBe(0);
    const tarball = (await readdir(dir)).find((f) => f.endsWith(".tgz"))!;
    project = join(dir, "project");
    await mkdir(join(project, "environments"), { recursive: true });
    await mkdir(join(project, "regress", "scenarios"), { recursive: true });
    await writeFile(join(project, "package.json"), JSON.stringify({ name: "user-project", private: true, type: "module" }));
    await writeFile(join(project, "environments", "word_echo.js"), WORD_ECHO);
    await writeFile(join(project, "regress", "scenarios", "echo-scripted.json"), JSON.stringify(SCRIPTED));
    await writeFile(join(project, "regress", "scenarios", "echo-tiny-model.json"), JSON.stringify(MODEL));
    await writeFile(join(project, "regress", "suite.json"), JSON.stringify({ scenarios: ["scenarios/echo-scripted.json", "scenarios/echo-tiny-model.json"] }));
    const installed = await sh("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", join(dir, tarball)], project);
    expect(installed.code, installed.stderr).toBe(0);
  }, 300_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("installs without building anything", () => {
    const pkg = join(project, "node_modules", "rollout-lab");
    expect(existsSync(join(pkg, "bin", "rollout-lab.mjs"))).toBe(true);
    expect(existsSync(join(pkg, "dist"))).toBe(false);
    expect(existsSync(join(pkg, "public", "models", "builtin"))).toBe(false);
    expect(existsSync(join(pkg, "src", "regress", "compare.test.ts"))).toBe(false);
  });

  it("writes goldens with --update, then passes against them with --junit (its own module, the built-in model built on first use)", async () => {
    const env = ["--environments", "environments"];
    const update = await sh("npx", ["rollout-lab", "regress", "regress/suite.json", "--update", ...env], project);
    expect(update.code, update.stderr).toBe(0);
    expect(update.stdout).toMatch(/^updated +echo-scripted /m);
    expect(update.stdout).toMatch(/^updated +echo-tiny-model /m);
    const golden = await readFile(join(project, "regress", "goldens", "echo-scripted", "samples.jsonl"), "utf8");
    expect(golden).toContain('"content":"no, say river"');
    const run = await sh("npx", ["rollout-lab", "regress", "regress/suite.json", "--junit", "reports/junit.xml", ...env], project);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("all 2 scenarios match their goldens");
    const xml = await readFile(join(project, "reports", "junit.xml"), "utf8");
    expect(XMLValidator.validate(xml)).toBe(true);
    const suite = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml).testsuites.testsuite;
    expect(suite).toMatchObject({ tests: "2", failures: "0", errors: "0" });
    expect(existsSync(join(project, "regress", "out", "report.html"))).toBe(true);
  }, 240_000);

  it("runs one scenario with rollout, and names what is wrong without its module", async () => {
    const ok = await sh("npx", ["rollout-lab", "rollout", "regress/scenarios/echo-scripted.json", "--environments", "environments"], project);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).samples).toHaveLength(3);
    const without = await sh("npx", ["rollout-lab", "rollout", "regress/scenarios/echo-scripted.json"], project);
    expect(without.code).toBe(1);
    expect(without.stderr).toContain("word_echo");
  }, 120_000);

  it.skipIf(!existsSync(chromium))(
    "runs the suite in the browser (WASM) against the same goldens: the lab built on first use, the module loaded into the page",
    async () => {
      const run = await sh("npx", ["rollout-lab", "regress", "regress/suite.json", "--backend", "wasm", "--environments", "environments", "--junit", "reports/wasm.xml", "--out", "regress/out-wasm"], project);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stderr).toContain("building the lab");
      expect(run.stdout).toContain("all 2 scenarios match their goldens");
      expect(existsSync(join(project, "node_modules", "rollout-lab", "dist", "index.html"))).toBe(true);
    },
    240_000,
  );
});

describe("rollout-lab installed from a git URL", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rollout-lab-git-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  // npm clones the repository (its committed HEAD: this checkout's last commit) and installs it as it would from
  // a host: no build step, the same files as the tarball.
  it.skipIf(!existsSync(join(root, ".git")))(
    "installs and runs a suite with the project's own module",
    async () => {
      await mkdir(join(dir, "environments"));
      await mkdir(join(dir, "scenarios"));
      await writeFile(join(dir, "package.json"), JSON.stringify({ name: "git-user", private: true, type: "module" }));
      await writeFile(join(dir, "environments", "word_echo.js"), WORD_ECHO);
      await writeFile(join(dir, "scenarios", "echo.json"), JSON.stringify(SCRIPTED));
      await writeFile(join(dir, "suite.json"), JSON.stringify({ scenarios: ["scenarios/echo.json"] }));
      const installed = await sh("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", `git+file://${root}`], dir);
      expect(installed.code, installed.stderr).toBe(0);
      const env = ["--environments", "environments"];
      expect((await sh("npx", ["rollout-lab", "regress", "suite.json", "--update", ...env], dir)).code).toBe(0);
      const run = await sh("npx", ["rollout-lab", "regress", "suite.json", "--junit", "junit.xml", ...env], dir);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^ok +echo$/m);
    },
    300_000,
  );
});
