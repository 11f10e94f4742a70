import { describe, expect, it } from "vitest";
import { Rng } from "../../core/index.js";
import { VirtualFs } from "./fs.js";
import { generateTask, gradeTask, TASK_KINDS, type WorkspaceTask } from "./tasks.js";

type Of<K extends WorkspaceTask["kind"]> = Extract<WorkspaceTask, { kind: K }>;

function fresh(kind: WorkspaceTask["kind"], seed = 1) {
  const { task, files } = generateTask(kind, Rng.derive(seed, "tasks-test"));
  return { task, fs: VirtualFs.withFiles(files), files };
}

describe("generateTask", () => {
  it("is deterministic by seed and varies across seeds", () => {
    for (const kind of TASK_KINDS) {
      expect(generateTask(kind, Rng.derive(5, "t"))).toEqual(generateTask(kind, Rng.derive(5, "t")));
      const variants = new Set([1, 2, 3, 4, 5].map((s) => JSON.stringify(generateTask(kind, Rng.derive(s, "t")).files)));
      expect(variants.size).toBeGreaterThan(1);
    }
  });

  it("starts unsolved", () => {
    for (const kind of TASK_KINDS) {
      for (const seed of [1, 2, 3]) {
        const { task, fs } = fresh(kind, seed);
        expect(gradeTask(task, fs).solved).toBe(false);
      }
    }
  });
});

describe("count_errors", () => {
  it("counts case-sensitive ERROR lines of the named log only", () => {
    for (const seed of [1, 2, 3, 4]) {
      const { task, files } = fresh("count_errors", seed);
      const t = task as Of<"count_errors">;
      const lines = files[t.log_path]!.split("\n").filter((l) => l.includes("ERROR"));
      expect(t.expected_count).toBe(lines.length);
      expect(t.expected_count).toBeGreaterThan(0);
    }
  });

  it("accepts the number with surrounding whitespace, rejects others", () => {
    const { task, fs } = fresh("count_errors");
    const t = task as Of<"count_errors">;
    fs.writeFile(t.answer_path, ` ${t.expected_count}\n`);
    expect(gradeTask(task, fs)).toEqual({ solved: true, reason: "" });
    fs.writeFile(t.answer_path, `${t.expected_count + 1}`);
    expect(gradeTask(task, fs).reason).toMatch(/is not the number of lines/);
  });
});

describe("list_python", () => {
  it("expects the sorted names of the .py files under src only", () => {
    const { task, files } = fresh("list_python");
    const t = task as Of<"list_python">;
    const names = Object.keys(files)
      .filter((p) => p.startsWith(`${t.source_dir}/`) && p.endsWith(".py"))
      .map((p) => p.slice(p.lastIndexOf("/") + 1))
      .sort();
    expect(t.expected_names).toEqual(names);
    expect(Object.keys(files).some((p) => p.endsWith(".py") && !p.startsWith(`${t.source_dir}/`))).toBe(true);
  });

  it("tolerates bullets and blank lines, but not wrong order or extra names", () => {
    const { task, fs } = fresh("list_python");
    const t = task as Of<"list_python">;
    fs.mkdir("/workspace/out", true);
    fs.writeFile(t.summary_path, t.expected_names.map((n) => `- ${n}`).join("\n") + "\n\n");
    expect(gradeTask(task, fs).solved).toBe(true);
    fs.writeFile(t.summary_path, [...t.expected_names].reverse().join("\n"));
    expect(gradeTask(task, fs).reason).toMatch(/not once each in sorted order/);
    fs.writeFile(t.summary_path, [...t.expected_names, "setup.py"].sort().join("\n"));
    expect(gradeTask(task, fs).reason).toMatch(/not wanted: setup\.py/);
  });
});

describe("fix_config", () => {
  it("wants only the debug line changed to false", () => {
    const { task, fs } = fresh("fix_config");
    const t = task as Of<"fix_config">;
    expect(t.original.split("\n").filter((l) => l === "debug = true")).toHaveLength(1);
    expect(t.original).toContain("debug_sql = true");
    fs.writeFile(t.config_path, t.original.replace("debug = true", "debug=false"));
    expect(gradeTask(task, fs).solved).toBe(true);
    fs.writeFile(t.config_path, t.original.replace(/= true/g, "= false"));
    expect(gradeTask(task, fs).reason).toMatch(/changed from "debug_sql = true"/);
    fs.writeFile(t.config_path, t.original.replace("debug = true\n", ""));
    expect(gradeTask(task, fs).reason).toMatch(/only the debug line may change/);
  });
});

describe("find_secret", () => {
  it("wants the one file with a SECRET_TOKEN= line, as an absolute or workspace-relative path", () => {
    const { task, fs, files } = fresh("find_secret");
    const t = task as Of<"find_secret">;
    const holders = Object.keys(files).filter((p) => /^SECRET_TOKEN=/m.test(files[p]!));
    expect(holders).toEqual([t.expected_path]);
    fs.writeFile(t.answer_path, `${t.expected_path}\n`);
    expect(gradeTask(task, fs).solved).toBe(true);
    fs.writeFile(t.answer_path, t.expected_path.replace("/workspace/", ""));
    expect(gradeTask(task, fs).solved).toBe(true);
    const decoy = Object.keys(files).find((p) => files[p]!.includes("SECRET_TOKEN rotation"))!;
    fs.writeFile(t.answer_path, decoy);
    expect(gradeTask(task, fs).reason).toMatch(/not the file with the SECRET_TOKEN= line/);
  });
});
