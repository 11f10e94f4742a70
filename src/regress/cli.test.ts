/** End to end: `npx tsx src/cli/regress.ts` on a temp copy of a small suite, with the committed goldens. */

import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const NAMES = ["calculator-scripted-sync", "puzzle-oracle-sync"];

function regress(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile("npx", ["tsx", "src/cli/regress.ts", ...args], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
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
    expect(stdout).toMatch(/^REGRESSED +calculator-scripted-sync: sample idx 0, turn 2, message \d+ \(assistant\), content at char 1/m);
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
    expect(stdout).toMatch(/^REGRESSED +puzzle-oracle-sync: sample idx 2, turn 0, message 0 \(user\), content at char \d+/m);
    expect(stdout).toMatch(/^MISSING +calculator-scripted-sync: no golden metrics\.json/m);
  }, 90_000);

  it("--update rewrites the goldens and exits 0; then the run matches", async () => {
    expect((await regress([suite, "--update", "--out", out])).code).toBe(0);
    const { code, stdout } = await regress([suite, "--out", out]);
    expect(code).toBe(0);
    expect(stdout).toContain("all 2 scenarios match their goldens");
  }, 90_000);

  it("refuses the browser backends and bad suites clearly", async () => {
    const wasm = await regress([suite, "--backend", "wasm"]);
    expect(wasm.code).toBe(2);
    expect(wasm.stderr).toContain("not available yet: only the node backend runs in this version");
    expect((await regress([suite, "--backend", "webgpu"])).code).toBe(2);
    const bad = join(dir, "bad.json");
    await writeFile(bad, JSON.stringify({ scenarios: ["x.json"], tolerance: {} }));
    const invalid = await regress([bad]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("tolerance: unknown key");
  }, 90_000);
});
