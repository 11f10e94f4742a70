/** Output files written whole or not at all (./output-file.ts): what was there survives a failure or a kill. */

import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pendingFile } from "./output-file.js";

const root = resolve(import.meta.dirname, "../..");
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "output-file-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("pendingFile", () => {
  it("replaces the target only when committed; abandoned, the target is as it was and nothing is left beside it", async () => {
    const target = join(dir, "result.json");
    await writeFile(target, '{"old": "precious"}');
    const dropped = pendingFile(target);
    dropped.stream.write('{"new": ');
    await dropped.abandon();
    expect(await readFile(target, "utf8")).toBe('{"old": "precious"}');
    expect(await readdir(dir)).toEqual(["result.json"]);

    const kept = pendingFile(target);
    kept.stream.write('{"new": true}');
    await kept.commit();
    expect(await readFile(target, "utf8")).toBe('{"new": true}');
    expect(await readdir(dir)).toEqual(["result.json"]);
  });

  it("a commit that cannot put the file in place fails, and removes what it wrote", async () => {
    const target = join(dir, "a-folder");
    await writeFile(join(dir, "keep.txt"), "x");
    await import("node:fs/promises").then((fs) => fs.mkdir(target));
    const file = pendingFile(target);
    file.stream.write("text");
    await expect(file.commit()).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect((await readdir(dir)).sort()).toEqual(["a-folder", "keep.txt"]);
  });

  it("a process killed while it writes leaves the earlier file whole, and no partial file", async () => {
    const target = join(dir, "result.json");
    await writeFile(target, '{"old": "precious"}');
    const script = join(dir, "killed.ts");
    await writeFile(
      script,
      `import { pendingFile } from ${JSON.stringify(join(root, "src/cli/output-file.ts"))};
const file = pendingFile(${JSON.stringify(target)});
file.stream.write('{"samples": [');
file.stream.once("ready", () => process.kill(process.pid, "SIGTERM"));
setTimeout(() => {}, 10_000);
`,
    );
    // Ended by the signal (tsx, between npx and the script, passes it on as 128 + 15).
    const ended = await new Promise<string>((done) => {
      execFile("npx", ["tsx", script], { cwd: root, timeout: 30_000 }, (error) => {
        const e = error as { signal?: string | null; code?: number } | null;
        done(e?.signal ?? String(e?.code ?? 0));
      });
    });
    expect(["SIGTERM", "143"]).toContain(ended);
    expect(await readFile(target, "utf8")).toBe('{"old": "precious"}');
    expect((await readdir(dir)).sort()).toEqual(["killed.ts", "result.json"]);
  }, 40_000);
});
