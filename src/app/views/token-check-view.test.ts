// The page's check agrees with the CLI's (`npm run tokens -- check`) on the same runs.
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { main as rollout } from "../../cli/rollout.js";
import { main as tokens } from "../../cli/tokens.js";
import { importJsonl } from "../run/jsonl.js";
import { checkByteLevel, checkInput, isByteLevelSpec, tokenizerSpecOf, withRunTokenizer, type WorkerCheck } from "./token-check-view.js";
import { checkFinished, CHUNK, driftingFilter, driftOf, filterRows } from "./drift.js";
import type { SampleView } from "../run/run-model.js";
import { checkSample } from "../../scenario/token-check.js";
import { byteLevelCheckTokenizer } from "./token-check-view.js";

const examples = join(import.meta.dirname, "../../scenario/examples");

async function quiet(fn: () => Promise<number>): Promise<{ code: number; stdout: string }> {
  let stdout = "";
  const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    return { code: await fn(), stdout };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "page-check-"));
});

async function workspaceRun(envelope: "fork" | "template") {
  const scenario = JSON.parse(await readFile(join(examples, "workspace-structured.json"), "utf8")) as Record<string, unknown> & { structured: Record<string, unknown> };
  scenario.structured.envelope = envelope;
  const scenarioPath = join(dir, `ws-${envelope}.json`);
  const resultPath = join(dir, `ws-${envelope}.result.json`);
  await writeFile(scenarioPath, JSON.stringify(scenario));
  expect((await quiet(() => rollout([scenarioPath, "--out", resultPath]))).code).toBe(0);
  const samples = (JSON.parse(await readFile(resultPath, "utf8")) as { samples: unknown[] }).samples;
  const { model } = importJsonl(samples.map((x) => JSON.stringify(x)).join("\n"));
  const cli = await quiet(() => tokens(["check", resultPath, "--scenario", scenarioPath, "--json"]));
  return { scenario, model, cli: JSON.parse(cli.stdout) as { samples: { idx: number; consistent: boolean; first_divergence: unknown }[] } };
}

describe("the page's token check", () => {
  it.each(["template", "fork"] as const)("equals the CLI's on the workspace run in the %s envelope", async (envelope) => {
    const { scenario, model, cli } = await workspaceRun(envelope);
    const page = model.samples.map((s) => {
      const r = checkByteLevel(s, scenario);
      return { idx: s.idx, consistent: r.consistent, first_divergence: r.first_divergence };
    });
    expect(page).toEqual(cli.samples);
    expect(page.every((p) => p.consistent)).toBe(envelope === "template");
    if (envelope === "fork") expect(page[0]!.first_divergence).toMatchObject({ message_index: 2, reason: "observation_envelope" });
  });

  it("without a scenario, guesses structured from the observations' tokens as the CLI does", async () => {
    const { model } = await workspaceRun("template");
    expect(checkInput(model.samples[0]!, null).structured).toBe(true);
    expect(model.samples.every((s) => checkByteLevel(s, null).consistent)).toBe(true);
  });

  it("picks the tokenizer as the CLI does: the scenario's key, else its model policy's model, else its server policy's tokenizer or model, else byte-level", () => {
    expect(tokenizerSpecOf({ policy: { kind: "server", base_url: "http://s/v1", model: "builtin:tiny-qwen3" } })).toBe("builtin:tiny-qwen3");
    expect(tokenizerSpecOf({ policy: { kind: "server", base_url: "http://s/v1", model: "served", tokenizer: "Qwen/Qwen3-0.6B" } })).toBe("Qwen/Qwen3-0.6B");
    expect(tokenizerSpecOf({ tokenizer: "builtin:tiny-qwen3", policy: { kind: "model", model: "builtin:tiny" } })).toBe("builtin:tiny-qwen3");
    expect(tokenizerSpecOf({ policy: { kind: "model", model: "builtin:tiny-qwen3" } })).toBe("builtin:tiny-qwen3");
    expect(tokenizerSpecOf({ policy: { kind: "oracle" } })).toBeNull();
    expect(isByteLevelSpec(tokenizerSpecOf({ policy: { kind: "model", model: "builtin:small" } }))).toBe(true);
    expect(isByteLevelSpec("builtin:tiny-qwen3")).toBe(false);
  });
});

describe("the batch's drift count and filter", () => {
  const run = (samples: readonly SampleView[], scenario: Record<string, unknown> | null, workerCheck?: WorkerCheck) => {
    let slices = 0;
    let needs: string | null = null;
    return checkFinished(samples, {
      scenario,
      workerCheck,
      signal: new AbortController().signal,
      onProgress: () => {},
      onNeedsModel: (m) => (needs = m),
      nextSlice: async () => void slices++,
    }).then(() => ({ slices, needs }));
  };

  it("a log the byte-level check cannot take (an imported token id outside its vocabulary) is left unchecked, the others checked", async () => {
    const fork = await workspaceRun("fork");
    const [first, ...rest] = fork.model.samples;
    const foreign = { ...first!, messages: first!.messages.map((m, i) => (i === 0 ? { ...m, token_ids: [...m.token_ids, 7919] } : m)) } as SampleView;
    await expect(run([foreign, ...rest], fork.scenario)).resolves.toBeDefined();
    expect(driftOf(foreign, fork.scenario)).toBeNull();
    expect(rest.map((s) => driftOf(s, fork.scenario))).toEqual(rest.map(() => true));
  });

  it("counts the drifting finished samples as the CLI does; the filter keeps only them", async () => {
    const fork = await workspaceRun("fork");
    const template = await workspaceRun("template");
    await run(fork.model.samples, fork.scenario);
    await run(template.model.samples, template.scenario);
    const drifting = (m: typeof fork) => m.model.samples.filter((s) => driftOf(s, m.scenario) === true).length;
    expect(drifting(fork)).toBe(fork.cli.samples.filter((s) => !s.consistent).length);
    expect(drifting(fork)).toBe(3);
    expect(drifting(template)).toBe(0);
    expect(filterRows(fork.model.samples, [driftingFilter(fork.scenario)])).toEqual([0, 1, 2]);
    expect(filterRows(template.model.samples, [driftingFilter(template.scenario)])).toEqual([]);
    // With no filter, every row.
    expect(filterRows(template.model.samples, [])).toEqual([0, 1, 2]);
  });

  it("300 samples: checked in slices of a few, each sample once (cached by its message log)", async () => {
    const { model, scenario } = await workspaceRun("fork");
    const many = Array.from({ length: 300 }, (_, i) => ({ ...model.samples[i % 3]!, sample: i, messages: [...model.samples[i % 3]!.messages] }));
    const first = await run(many, scenario);
    expect(first.slices).toBe(Math.ceil(300 / CHUNK) - 1);
    expect(many.every((s) => driftOf(s, scenario) === true)).toBe(true);
    const again = await run(many, scenario);
    expect(again.slices).toBe(0);
  });

  it("a real vocabulary asks the worker per sample; a model not loaded stops the count and says which", async () => {
    const { model, scenario } = await workspaceRun("template");
    const qwen = { ...scenario, tokenizer: "builtin:tiny-qwen3" };
    let calls = 0;
    const worker: WorkerCheck = (sample) => (calls++, Promise.resolve({ kind: "checked", result: checkSample(sample, byteLevelCheckTokenizer), tokenizer: "builtin:tiny-qwen3" }));
    await run(model.samples, qwen, worker);
    expect(calls).toBe(3);
    expect(model.samples.map((s) => driftOf(s, qwen))).toEqual([false, false, false]);
    const other = { ...scenario, tokenizer: "org/model" };
    expect((await run(model.samples, other)).needs).toBe("org/model");
    expect(model.samples.map((s) => driftOf(s, other))).toEqual([null, null, null]);
  });
});

describe("withRunTokenizer: the tokenizer chosen in the page for a run that names none", () => {
  it("reads a run without a scenario (an imported dump) with the chosen tokenizer", () => {
    expect(tokenizerSpecOf(withRunTokenizer(null, "builtin:tiny-qwen3"))).toBe("builtin:tiny-qwen3");
  });
  it("keeps a scenario's own tokenizer or model over the choice, and the scenario itself when nothing is chosen", () => {
    const own = { tokenizer: "Qwen/Qwen3-0.6B" };
    expect(withRunTokenizer(own, "builtin:tiny-qwen3")).toBe(own);
    const model = { policy: { kind: "model", model: "builtin:tiny" } };
    expect(withRunTokenizer(model, "builtin:tiny-qwen3")).toBe(model);
    const scripted = { policy: { kind: "scripted" }, structured: { enabled: true } };
    expect(withRunTokenizer(scripted, null)).toBe(scripted);
    expect(withRunTokenizer(scripted, "builtin:tiny-qwen3")).toEqual({ ...scripted, tokenizer: "builtin:tiny-qwen3" });
  });
});
