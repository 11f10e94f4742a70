import { describe, expect, it } from "vitest";
import { FsError, MAX_FILE_CHARS, normalizePath, VirtualFs } from "./fs.js";

describe("normalizePath", () => {
  it("resolves relative paths against the current directory and removes . and ..", () => {
    expect(normalizePath("a/b.txt")).toBe("/workspace/a/b.txt");
    expect(normalizePath("./a//b/../c", "/workspace/x")).toBe("/workspace/x/a/c");
    expect(normalizePath("../../../..", "/workspace/x")).toBe("/");
    expect(normalizePath("/etc/./passwd/")).toBe("/etc/passwd");
  });
});

describe("VirtualFs", () => {
  const tree = () => VirtualFs.withFiles({ "/workspace/a.txt": "A\n", "/workspace/src/pkg/m.py": "x = 1\n" });

  it("round-trips through plain JSON with sorted keys and every ancestor directory", () => {
    const state = tree().toJSON();
    expect(state).toEqual({
      cwd: "/workspace",
      files: { "/workspace/a.txt": "A\n", "/workspace/src/pkg/m.py": "x = 1\n" },
      dirs: ["/", "/workspace", "/workspace/src", "/workspace/src/pkg"],
    });
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    expect(VirtualFs.fromJSON(state).toJSON()).toEqual(state);
  });

  it("does not share state with the JSON it was read from", () => {
    const state = tree().toJSON();
    const fs = VirtualFs.fromJSON(state);
    fs.writeFile("/workspace/a.txt", "changed");
    expect(state.files["/workspace/a.txt"]).toBe("A\n");
  });

  it("rejects malformed state", () => {
    expect(() => VirtualFs.fromJSON(null)).toThrow(/missing or malformed/);
    expect(() => VirtualFs.fromJSON({ cwd: "/", files: { "/a": 1 } })).toThrow(/no text contents/);
  });

  it("reports POSIX errors", () => {
    const fs = tree();
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as FsError).code;
      }
      return "ok";
    };
    expect(code(() => fs.readFile("/workspace/none"))).toBe("ENOENT");
    expect(code(() => fs.readFile("/workspace/src"))).toBe("EISDIR");
    expect(code(() => fs.writeFile("/workspace/no/dir/x", ""))).toBe("ENOENT");
    expect(code(() => fs.writeFile("/workspace/a.txt/x", ""))).toBe("ENOTDIR");
    expect(code(() => fs.mkdir("/workspace/src"))).toBe("EEXIST");
    expect(code(() => fs.remove("/workspace/src"))).toBe("ENOTEMPTY");
    expect(code(() => fs.writeFile("/workspace/big", "x".repeat(MAX_FILE_CHARS + 1)))).toBe("EFBIG");
    expect(code(() => fs.resolve(""))).toBe("ENOENT");
  });

  it("lists, walks, copies, moves and removes", () => {
    const fs = tree();
    expect(fs.list("/workspace")).toEqual(["a.txt", "src"]);
    expect(fs.walk("/workspace")).toEqual(["/workspace/a.txt", "/workspace/src", "/workspace/src/pkg", "/workspace/src/pkg/m.py"]);
    fs.copy("/workspace/src", "/workspace/lib");
    expect(fs.readFile("/workspace/lib/pkg/m.py")).toBe("x = 1\n");
    fs.move("/workspace/lib", "/workspace/old");
    expect(fs.exists("/workspace/lib")).toBe(false);
    expect(fs.isDir("/workspace/old/pkg")).toBe(true);
    fs.cwd = "/workspace/old/pkg";
    fs.remove("/workspace/old", true);
    expect(fs.cwd).toBe("/workspace");
    expect(fs.list("/workspace")).toEqual(["a.txt", "src"]);
  });

  it("treats /dev/null as an empty sink", () => {
    const fs = tree();
    fs.writeFile("/dev/null", "gone");
    expect(fs.readFile("/dev/null")).toBe("");
  });
});
