/**
 * End to end (`tsx src/cli/regress.ts`): goldens that hold on any machine. The committed golden of the sample
 * suite's model scenario, perturbed as another CPU or backend would perturb it, still passes; perturbed as a real
 * change would, it fails, named, and the JUnit file and step summary say so. Also: `--repeat` finds a
 * nondeterministic environment, and a damaged golden or a bad scenario is bad input (exit 2) while the other
 * scenarios still run.
 */

import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const MODEL = "puzzle-tiny-model-greedy";
const SCRIPTED = "calculator-scripted-sync";

function regress(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile("npx", ["tsx", "src/cli/regress.ts", ...args], { cwd: root, timeout: 120_000, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

type Sample = { idx: number; message_log: { role: string; token_ids: number[]; generation_logprobs?: number[] }[] };

const readJsonl = async (path: string): Promise<Sample[]> =>
  (await readFile(path, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Sample);
const writeJsonl = (path: string, samples: Sample[]) => writeFile(path, samples.map((s) => `${JSON.stringify(s)}\n`).join(""));

const junitCases = async (path: string) => {
  const xml = await readFile(path, "utf8");
  expect(XMLValidator.validate(xml)).toBe(true);
  const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", isArray: (n) => n === "testcase" }).parse(xml);
  return parsed.testsuites.testsuite.testcase as { name: string; failure?: { message: string; type: string }; error?: { message: string; type: string } }[];
};

describe("goldens perturbed as other machines and real changes would perturb them", () => {
  let dir: string;
  let goldenSamples: string;
  let suite: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "regress-portable-"));
    for (const name of [MODEL, SCRIPTED]) {
      await cp(join(root, "regress/scenarios", `${name}.json`), join(dir, "scenarios", `${name}.json`));
    }
    suite = join(dir, "suite.json");
    await writeFile(suite, JSON.stringify({ scenarios: [MODEL, SCRIPTED].map((n) => `scenarios/${n}.json`) }));
    goldenSamples = join(dir, "goldens", MODEL, "samples.jsonl");
  });
  beforeEach(async () => {
    await rm(join(dir, "goldens"), { recursive: true, force: true });
    for (const name of [MODEL, SCRIPTED]) await cp(join(root, "regress/goldens", name), join(dir, "goldens", name), { recursive: true });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("passes with every logprob moved by 3e-6 (more than two CPUs' rounding differs)", async () => {
    const samples = await readJsonl(goldenSamples);
    let moved = 0;
    for (const s of samples) for (const m of s.message_log) if (m.generation_logprobs) m.generation_logprobs = m.generation_logprobs.map((x, i) => (moved++, x + (i % 2 ? 3e-6 : -3e-6)));
    expect(moved).toBeGreaterThan(20);
    await writeJsonl(goldenSamples, samples);
    const junit = join(dir, "junit.xml");
    const { code, stdout } = await regress([suite, "--out", join(dir, "out"), "--junit", junit]);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^ok +${MODEL}: floats within \\S+ of the golden \\(generation_logprobs\\)$`, "m"));
    const cases = await junitCases(junit);
    expect(cases.map((c) => c.name)).toEqual([MODEL, SCRIPTED]);
    expect(cases.every((c) => !c.failure && !c.error)).toBe(true);
  }, 120_000);

  it("fails one logprob moved by 0.05 as a float beyond tolerance, naming scenario, sample, turn and token, in JUnit and the summary", async () => {
    const samples = await readJsonl(goldenSamples);
    const assistant = samples[1]!.message_log.filter((m) => m.role === "assistant")[1]!;
    assistant.generation_logprobs![3] = assistant.generation_logprobs![3]! - 0.05;
    await writeJsonl(goldenSamples, samples);
    const junit = join(dir, "reports", "junit.xml");
    const summary = join(dir, "reports", "summary.md");
    const { code, stdout } = await regress([suite, "--out", join(dir, "out"), "--junit", junit, "--summary", summary]);
    expect(code).toBe(1);
    const where = `float beyond tolerance: sample idx ${samples[1]!.idx}, turn 1, message \\d+ \\(assistant\\), token 3, generation_logprobs\\[3\\]: golden \\S+, run \\S+ \\(\\|Δ\\| 0\\.05\\d* > tolerance 0\\.001\\)`;
    expect(stdout).toMatch(new RegExp(`^REGRESSED +${MODEL}: ${where}$`, "m"));
    expect(stdout).toMatch(new RegExp(`^ok +${SCRIPTED}$`, "m"));
    const [model, scripted] = await junitCases(junit);
    expect(model!.name).toBe(MODEL);
    expect(model!.failure!.type).toBe("regressed");
    expect(model!.failure!.message).toMatch(new RegExp(`^${where}$`));
    expect(scripted!.failure).toBeUndefined();
    const md = await readFile(summary, "utf8");
    expect(md).toMatch(new RegExp(`^\\| ${MODEL} \\| ❌ regressed \\| float beyond tolerance: sample idx ${samples[1]!.idx}, turn 1,`, "m"));
    expect(md).toContain(`| ${SCRIPTED} | ✅ ok |  |`);
  }, 120_000);

  it("fails a changed token id as a token difference, whatever the tolerance", async () => {
    const samples = await readJsonl(goldenSamples);
    const assistant = samples[0]!.message_log.find((m) => m.role === "assistant")!;
    assistant.token_ids[2] = assistant.token_ids[2]! + 1;
    await writeJsonl(goldenSamples, samples);
    await writeFile(suite, JSON.stringify({ scenarios: [MODEL, SCRIPTED].map((n) => `scenarios/${n}.json`), tolerances: { generation_logprobs: 1, token_ids: 1e9 } }));
    try {
      const junit = join(dir, "junit.xml");
      const { code, stdout } = await regress([suite, "--out", join(dir, "out"), "--junit", junit]);
      expect(code).toBe(1);
      expect(stdout).toMatch(new RegExp(`^REGRESSED +${MODEL}: tokens differ: sample idx ${samples[0]!.idx}, turn 0, message 1 \\(assistant\\), token 2, token_ids\\[2\\]`, "m"));
      expect((await junitCases(junit))[0]!.failure!.message).toMatch(/^tokens differ: .*token 2, token_ids\[2\]: golden \d+, run \d+$/);
    } finally {
      await writeFile(suite, JSON.stringify({ scenarios: [MODEL, SCRIPTED].map((n) => `scenarios/${n}.json`) }));
    }
  }, 120_000);

  it("reports each damaged golden as its own scenario's bad input (exit 2), the run going on past the first", async () => {
    await writeFile(join(dir, "goldens", MODEL, "metrics.json"), '{"total_turns": NaN}\n');
    await rm(join(dir, "goldens", SCRIPTED, "samples.jsonl"));
    await mkdir(join(dir, "goldens", SCRIPTED, "samples.jsonl"));
    const junit = join(dir, "junit.xml");
    const { code, stdout, stderr } = await regress([suite, "--out", join(dir, "out"), "--junit", junit]);
    expect(stderr).not.toMatch(/at .*\.ts:\d+/); // no stack trace
    expect(code).toBe(2);
    expect(stdout).toMatch(new RegExp(`^BAD INPUT +${MODEL}: damaged golden .*metrics\\.json: not valid JSON at line 1, column \\d+`, "m"));
    expect(stdout).toMatch(new RegExp(`^BAD INPUT +${SCRIPTED}: damaged golden .*samples\\.jsonl: a folder, expected a file$`, "m"));
    const cases = await junitCases(junit);
    expect(cases.map((c) => c.error?.type)).toEqual(["bad input", "bad input"]);
  }, 120_000);
});

describe("exit status 2 for a bad suite or scenario, 1 for a regression", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "regress-exit-"));
    await cp(join(root, "regress/scenarios", `${SCRIPTED}.json`), join(dir, "scenarios", `${SCRIPTED}.json`));
    await cp(join(root, "regress/goldens", SCRIPTED), join(dir, "goldens", SCRIPTED), { recursive: true });
    await writeFile(join(dir, "scenarios", "broken.json"), '{"mode": "sync", "policy": {"kind": "scripted", "temperature": 1}');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("a scenario that cannot be read is bad input; the good one still runs", async () => {
    const suite = join(dir, "suite.json");
    await writeFile(suite, JSON.stringify({ scenarios: ["scenarios/broken.json", `scenarios/${SCRIPTED}.json`] }));
    const { code, stdout } = await regress([suite]);
    expect(code).toBe(2);
    expect(stdout).toMatch(/^BAD INPUT +broken: .*broken\.json: not valid JSON/m);
    expect(stdout).toMatch(new RegExp(`^ok +${SCRIPTED}$`, "m"));
  }, 60_000);

  it("a bad suite is exit 2 and still leaves CI a JUnit file naming the problem", async () => {
    const suite = join(dir, "bad-suite.json");
    await writeFile(suite, JSON.stringify({ scenarios: [], tolerance: {} }));
    const junit = join(dir, "reports", "suite-junit.xml");
    const { code, stderr } = await regress([suite, "--junit", junit]);
    expect(code).toBe(2);
    expect(stderr).toContain("tolerance: unknown key");
    const [only] = await junitCases(junit);
    expect(only).toMatchObject({ name: "(suite)", error: { type: "bad input" } });
    expect(only!.error!.message).toContain("tolerance: unknown key");
  }, 60_000);

  it("rejects a bad --repeat", async () => {
    const { code, stderr } = await regress([join(dir, "suite.json"), "--repeat", "0"]);
    expect(code).toBe(2);
    expect(stderr).toContain("--repeat expects a whole number of runs from 1 to 100, got '0'");
  }, 60_000);
});

describe("--repeat N finds flakiness", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "regress-repeat-"));
    const starter = await readFile(join(root, "environments/number_guess.js"), "utf8");
    // The same game, but its "higher"/"lower" hint is sometimes "more"/"less": a nondeterministic environment.
    const flaky = starter
      .replace('name: "number_guess"', 'name: "flaky_guess"')
      .replace('defaultTaskName: "number_guess"', 'defaultTaskName: "flaky_guess"')
      .replace('const hint = guess < state.secret ? "higher" : "lower";', 'const hint = Math.random() < 0.5 ? (guess < state.secret ? "higher" : "lower") : guess < state.secret ? "more" : "less";');
    expect(flaky).toContain("Math.random()");
    await mkdir(join(dir, "envs"));
    await writeFile(join(dir, "envs", "flaky_guess.js"), flaky);
    await writeFile(join(dir, "envs", "number_guess.js"), starter);
    const scenario = JSON.parse(await readFile(join(root, "regress/scenarios/number-guess-scripted-async.json"), "utf8"));
    await mkdir(join(dir, "scenarios"));
    await writeFile(join(dir, "scenarios", "steady.json"), JSON.stringify(scenario));
    scenario.envs = { flaky_guess: { env: "flaky_guess", config: {} } };
    scenario.dataset.task_name = "flaky_guess";
    await writeFile(join(dir, "scenarios", "flaky.json"), JSON.stringify(scenario));
    await writeFile(join(dir, "suite.json"), JSON.stringify({ scenarios: ["scenarios/steady.json", "scenarios/flaky.json"] }));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("fails the scenario whose runs differ from each other, naming the run and the first difference; the steady one passes", async () => {
    const suite = join(dir, "suite.json");
    const env = ["--environments", join(dir, "envs")];
    const junit = join(dir, "junit.xml");
    // --update refuses to write a flaky scenario's golden; the steady one gets its golden.
    const update = await regress([suite, "--update", "--repeat", "8", ...env]);
    expect(update.code).toBe(1);
    expect(update.stdout).toMatch(/^updated +steady \(.*8 identical runs\)$/m);
    expect(update.stdout).toMatch(/^FLAKY +flaky: run \d of 8 differs from run 1; text differs: sample idx \d+, turn \d+, message \d+ \(environment\), content at char \d+/m);
    const { code, stdout } = await regress([suite, "--repeat", "8", "--junit", junit, ...env]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^ok +steady$/m);
    expect(stdout).toMatch(/^FLAKY +flaky: run \d of 8 differs from run 1; text differs: /m);
    expect(stdout).toMatch(/^== flaky: run 1 \(as golden\) against run \d$/m);
    const flaky = (await junitCases(junit)).find((c) => c.name === "flaky")!;
    expect(flaky.failure!.type).toBe("flaky");
    const report = JSON.parse(await readFile(join(dir, "out", "report.json"), "utf8"));
    expect(report.repeat).toBe(8);
    expect(report.comparisons[1]).toMatchObject({ name: "flaky", status: "flaky", repeat: { runs: 8 } });
  }, 120_000);
});
