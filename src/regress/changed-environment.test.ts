/**
 * The regression suite's purpose, end to end: the same scenario against a deliberately changed environment (a
 * copy of the starter module whose "lower" hint now reads "smaller") fails, naming the sample and turn where the
 * changed observation first appears in the golden transcript.
 */

import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const NAME = "number-guess-scripted-async";

function regress(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string }> {
  return new Promise((done) => {
    execFile("npx", ["tsx", "src/cli/regress.ts", ...args], { cwd: root, timeout: 60_000, env: { ...process.env, ...env } }, (error, stdout) =>
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout }),
    );
  });
}

describe("a deliberately changed environment", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "regress-env-"));
    await cp(join(root, "regress/scenarios", `${NAME}.json`), join(dir, "scenarios", `${NAME}.json`));
    await cp(join(root, "regress/goldens", NAME), join(dir, "goldens", NAME), { recursive: true });
    await writeFile(join(dir, "suite.json"), JSON.stringify({ scenarios: [`scenarios/${NAME}.json`] }));
    await mkdir(join(dir, "same"));
    await mkdir(join(dir, "changed"));
    const starter = await readFile(join(root, "environments/number_guess.js"), "utf8");
    await writeFile(join(dir, "same", "number_guess.js"), starter);
    expect(starter).toContain('"higher" : "lower"');
    await writeFile(join(dir, "changed", "number_guess.js"), starter.replace('"higher" : "lower"', '"higher" : "smaller"'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("fails the suite at the first turn whose observation changed", async () => {
    const args = [join(dir, "suite.json"), "--out", join(dir, "out")];
    expect((await regress(args, { LAB_ENVIRONMENTS_DIR: join(dir, "same") })).stdout).toMatch(new RegExp(`^ok +${NAME}$`, "m"));

    // Where the golden first says "lower": that sample, and the turn of the assistant message before it.
    const golden = (await readFile(join(dir, "goldens", NAME, "samples.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    let expected = "";
    for (const sample of golden) {
      const log = sample.message_log as { role: string; content: string }[];
      const at = log.findIndex((m) => m.role === "environment" && m.content.startsWith("<environment>lower"));
      if (at < 0) continue;
      const turn = log.slice(0, at).filter((m) => m.role === "assistant").length - 1;
      expected = `text differs: sample idx ${sample.idx}, turn ${turn}, message ${at} (environment), content at char 13`;
      break;
    }
    expect(expected).not.toBe("");
    const { code, stdout } = await regress(args, { LAB_ENVIRONMENTS_DIR: join(dir, "changed") });
    expect(code).toBe(1);
    expect(stdout).toContain(`REGRESSED  ${NAME}: ${expected}`);
    expect(await readFile(join(dir, "out", "report.html"), "utf8")).toContain("smaller");
  }, 120_000);
});
