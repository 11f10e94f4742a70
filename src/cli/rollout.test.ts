/**
 * `rollout-lab rollout` (its `main(argv)`, in-process): the result is written a piece at a time yet byte for byte as
 * `JSON.stringify(result, null, 2)` + "\n" (to --out and to stdout); what cannot fit in memory is refused up front
 * naming `dataset.size`; a scenario or replay file whose bytes are not UTF-8 is an error naming the byte.
 */

import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { HEAP_BYTES_PER_SAMPLE, nodeSampleLimit } from "./node-run.js";
import { main, writeResult } from "./rollout.js";
import { withoutTiming } from "../scenario/result.js";

const examples = join(import.meta.dirname, "../scenario/examples");

/** Runs main(argv), capturing what it writes to stdout and stderr. */
async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
  try {
    const code = await main(argv);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the result, written in pieces", () => {
  it("--out and stdout hold exactly JSON.stringify(result, null, 2) and a newline", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rollout-cli-"));
    const out = join(dir, "result.json");
    const { code, stderr } = await run([join(examples, "workspace-structured.json"), "--out", out]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const text = await readFile(out, "utf8");
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    expect(JSON.parse(text).samples).toHaveLength(3);

    const printed = await run([join(examples, "calculator-scripted.json")]);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toBe(`${JSON.stringify(JSON.parse(printed.stdout), null, 2)}\n`);
  }, 60_000);

  it("--env-metrics writes the environments' own metrics after the run, and leaves the result as it was", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rollout-cli-"));
    const [plain, withMetrics, metrics] = [join(dir, "a.json"), join(dir, "b.json"), join(dir, "m.json")];
    expect((await run([join(examples, "calculator-scripted.json"), "--out", plain])).code).toBe(0);
    expect((await run([join(examples, "calculator-scripted.json"), "--out", withMetrics, "--env-metrics", metrics])).code).toBe(0);
    const strip = (text: string) => {
      const r = JSON.parse(text) as { metrics: Record<string, unknown> };
      return JSON.stringify({ ...r, metrics: withoutTiming(r.metrics) });
    };
    expect(strip(await readFile(withMetrics, "utf8"))).toBe(strip(await readFile(plain, "utf8")));
    const result = JSON.parse(await readFile(plain, "utf8")) as { samples: { total_reward: number }[] };
    const solved = result.samples.filter((s) => s.total_reward === 1).length / result.samples.length;
    expect(JSON.parse(await readFile(metrics, "utf8"))).toEqual({
      environment_metrics: [{ task: "multi_step_calculator_game", metrics: { success_rate: solved } }],
    });
    expect((await run([join(examples, "calculator-scripted.json"), "--env-metrics"])).stderr).toContain("--env-metrics needs a file path");
  }, 60_000);

  it("writeResult writes many MB in pieces (waiting whenever the stream is full) and reports a path it cannot write", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rollout-cli-"));
    // Several MB: many writes, each over the stream's buffer, so backpressure is waited for.
    const result = { samples: Array.from({ length: 200 }, (_, i) => ({ idx: i, text: "é".repeat(30_000), list: [i, [i]] })), metrics: { a: 1 } };
    await writeResult(result, join(dir, "big.json"));
    expect(await readFile(join(dir, "big.json"), "utf8")).toBe(`${JSON.stringify(result, null, 2)}\n`);
    await expect(writeResult(result, join(dir, "no-such-folder", "x.json"))).rejects.toThrow(/ENOENT/);
  });
});

describe("what cannot fit is refused up front", () => {
  it("the bound comes from the heap limit: 64 KiB a sample", () => {
    expect(HEAP_BYTES_PER_SAMPLE).toBe(65_536);
    expect(nodeSampleLimit(4 * 2 ** 30).max).toBe(65_536);
    expect(nodeSampleLimit(4 * 2 ** 30).why).toBe(
      "at most 65536 fit in its 4096 MiB heap (64 KiB a sample at the least); give Node more (NODE_OPTIONS=--max-old-space-size=<MiB>) or split the dataset into several runs",
    );
  });

  it("a 1,000,000-sample dataset is refused before a sample is generated, naming dataset.size", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rollout-cli-"));
    const scenario = JSON.parse(await readFile(join(examples, "calculator-oracle.json"), "utf8"));
    scenario.dataset.size = 1_000_000;
    await writeFile(join(dir, "huge.json"), JSON.stringify(scenario));
    const { code, stdout, stderr } = await run([join(dir, "huge.json")]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    const { max, why } = nodeSampleLimit();
    expect(max).toBeLessThan(1_000_000);
    expect(stderr).toContain(`  dataset.size: 1000000 samples cannot fit in this process's memory: ${why}`);
  });
});

describe("files whose bytes are not UTF-8", () => {
  it("a scenario file: the file, the byte and the line", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rollout-cli-"));
    const bytes = await readFile(join(examples, "calculator-scripted.json"));
    const at = bytes.indexOf("Solve");
    bytes[at] = 0xff;
    await writeFile(join(dir, "bad.json"), bytes);
    const { code, stderr } = await run([join(dir, "bad.json")]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${join(dir, "bad.json")}: not valid UTF-8 at byte ${at} (line 9): the file must be UTF-8 text`);
  });

  it("a replay's saved run", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rollout-cli-"));
    const scenario = JSON.parse(await readFile(join(examples, "calculator-scripted.json"), "utf8"));
    await writeFile(join(dir, "replay.json"), JSON.stringify({ ...scenario, policy: { kind: "replay", file: "run.jsonl" } }));
    const line = new TextEncoder().encode('{"idx": 0, "task_name": "t", "message_log": [{"role": "assistant", "content": "x"}]}\n');
    line[line.indexOf(0x78)] = 0xc0; // an overlong lead byte where the x was
    await writeFile(join(dir, "run.jsonl"), line);
    const { code, stderr } = await run([join(dir, "replay.json")]);
    expect(code).toBe(1);
    expect(stderr).toContain(`policy.file: cannot use 'run.jsonl': not valid UTF-8 at byte ${line.indexOf(0xc0)} (line 1): the file must be UTF-8 text`);
  });
});
