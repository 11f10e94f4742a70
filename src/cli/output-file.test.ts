/** Output files written whole or not at all (./output-file.ts): what was there survives a failure or a kill. */

import { execFile, execFileSync } from "node:child_process";
import { lstat, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
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

  it("abandoned at once (before its temporary file is even open), leaves nothing beside the target", async () => {
    const target = join(dir, "early.json");
    for (let k = 0; k < 20; k++) {
      const dropped = pendingFile(target);
      await dropped.abandon();
    }
    // The opens the streams had under way have finished by now (a stream closes only after its open).
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await readdir(dir)).filter((f) => f.includes("early"))).toEqual([]);
  });

  it("abandoned before an open that fails (a folder that does not exist), it resolves: the caller's own error is what is said", async () => {
    const nowhere = join(dir, "no-such-folder", "out.json");
    await expect(pendingFile(nowhere).abandon()).resolves.toBeUndefined();
  });

  it("writes through what is not a plain file, as a plain write does: a link's file, a pipe, /dev/null", async () => {
    const file = join(dir, "target.json");
    await writeFile(file, "EARLIER");
    const link = join(dir, "link.json");
    await symlink(file, link);
    const viaLink = pendingFile(link);
    viaLink.stream.write("NEW");
    await viaLink.commit();
    expect(await readFile(file, "utf8")).toBe("NEW");
    expect((await lstat(link)).isSymbolicLink()).toBe(true);

    const pipe = join(dir, "pipe");
    execFileSync("mkfifo", [pipe]);
    const read = readFile(pipe, "utf8");
    const viaPipe = pendingFile(pipe);
    viaPipe.stream.write("through the pipe");
    await viaPipe.commit();
    expect(await read).toBe("through the pipe");
    expect((await lstat(pipe)).isFIFO()).toBe(true);

    const devNull = pendingFile("/dev/null");
    devNull.stream.write("gone");
    await devNull.commit();
    expect((await lstat("/dev/null")).isCharacterDevice()).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(["link.json", "pipe", "target.json"]);
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
