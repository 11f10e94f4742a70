import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readGolden } from "./golden.js";

describe("readGolden", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "golden-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function golden(name: string, files: Record<string, string | Uint8Array>) {
    await mkdir(join(dir, name), { recursive: true });
    for (const [file, text] of Object.entries(files)) await writeFile(join(dir, name, file), text);
    return readGolden(join(dir, name));
  }

  it("reads a whole golden, and absent files as null", async () => {
    expect(await golden("whole", { "samples.jsonl": '{"idx":0}\n', "metrics.json": '{"m": 1}' })).toEqual({ samplesJsonl: '{"idx":0}\n', metrics: { m: 1 } });
    expect(await golden("empty", {})).toEqual({ samplesJsonl: null, metrics: null });
  });

  it("names the file and line of damage: not JSON, not a sample, too deep, not UTF-8, a folder, not an object", async () => {
    await expect(golden("bad-line", { "samples.jsonl": '{"idx":0}\n{"idx":\n' })).rejects.toThrow(/samples\.jsonl: line 2: not valid JSON/);
    await expect(golden("array", { "samples.jsonl": "[1]\n" })).rejects.toThrow(/samples\.jsonl: line 1: expected a sample object/);
    const deep = `{"idx":0,"extra_env_info":${"[".repeat(5000)}${"]".repeat(5000)}}\n`;
    await expect(golden("deep", { "samples.jsonl": deep })).rejects.toThrow(/samples\.jsonl: line 1: extra_env_info(\[0\])+…?: nested deeper than 100 levels/);
    await expect(golden("latin1", { "samples.jsonl": Uint8Array.from([0x7b, 0x7d, 0x0a, 0xe9, 0x0a]) })).rejects.toThrow(/samples\.jsonl: not valid UTF-8 at byte 3/);
    await expect(golden("nan", { "metrics.json": '{"m": NaN}' })).rejects.toThrow(/metrics\.json: not valid JSON/);
    await expect(golden("list", { "metrics.json": "[]" })).rejects.toThrow(/metrics\.json: expected an object of metric name → value/);
    await mkdir(join(dir, "folder", "samples.jsonl"), { recursive: true });
    await expect(readGolden(join(dir, "folder"))).rejects.toThrow(/samples\.jsonl: a folder, expected a file/);
  });
});
