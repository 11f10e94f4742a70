import { describe, expect, it } from "vitest";
import { pyJsonDumps, SESSION_TOOLS } from "../../core/index.js";
import { workspaceEnvironment } from "./index.js";
import { WORKSPACE_PREAMBLE } from "./dataset.js";
import type { WorkspaceMetadata } from "./env.js";
import { TASK_KINDS } from "./tasks.js";

const generate = (config: Record<string, unknown> = {}, size = 4, seed = 3) =>
  workspaceEnvironment.generateDataset({ size, seed, config, taskName: "my_task" });

describe("workspace dataset", () => {
  it("advertises SESSION_TOOLS in the system turn and asks the task in the user turn", () => {
    const [datum] = generate();
    const prompt = datum!.message_log[0]!.content;
    expect(datum!.message_log).toHaveLength(1);
    expect(datum!.message_log[0]!.role).toBe("user");
    expect(prompt.startsWith("<|im_start|>system\nYou are a helpful assistant.\n\n# Tools\n")).toBe(true);
    for (const tool of SESSION_TOOLS.chatTemplateTools()) expect(prompt).toContain(`\n${pyJsonDumps(tool)}\n`);
    const meta = datum!.extra_env_info as WorkspaceMetadata;
    expect(prompt).toContain(`<|im_start|>user\n${WORKSPACE_PREAMBLE}\n\nTask: ${meta.task.instruction}\n\n`);
    expect(prompt).toContain("task_complete");
    expect(prompt.endsWith("<|im_end|>\n<|im_start|>assistant\n")).toBe(true);
    expect(datum!.stop_strings).toBeNull();
    expect(datum!.task_name).toBe("my_task");
  });

  it("in legacy mode has no tools and asks for ```bash blocks and TASK_COMPLETE", () => {
    const prompt = generate({ structured_tools: false })[0]!.message_log[0]!.content;
    expect(prompt).not.toContain("<tools>");
    expect(prompt.startsWith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n")).toBe(true);
    expect(prompt).toContain("```bash code block");
    expect(prompt).toContain("TASK_COMPLETE on a line of its own");
  });

  it("cycles through the requested task kinds, seeded, with the tree and turn 0 in the metadata", () => {
    const kinds = (data: ReturnType<typeof generate>) => data.map((d) => (d.extra_env_info as WorkspaceMetadata).task.kind);
    expect(kinds(generate({}, 5))).toEqual([...TASK_KINDS, TASK_KINDS[0]]);
    expect(kinds(generate({ tasks: ["fix_config"] }, 2))).toEqual(["fix_config", "fix_config"]);
    const meta = generate()[0]!.extra_env_info as WorkspaceMetadata;
    expect(meta.turn).toBe(0);
    expect(meta.fs.cwd).toBe("/workspace");
    expect(Object.keys(meta.fs.files).length).toBeGreaterThan(0);
    expect(meta.max_turns).toBeUndefined();
    expect((generate({ max_turns: 3 })[0]!.extra_env_info as WorkspaceMetadata).max_turns).toBe(3);
  });

  it("is deterministic by seed, and datum i does not depend on the size", () => {
    expect(generate({}, 4, 9)).toEqual(generate({}, 4, 9));
    expect(generate({}, 2, 9)).toEqual(generate({}, 4, 9).slice(0, 2));
    expect(JSON.stringify(generate({}, 4, 9))).not.toBe(JSON.stringify(generate({}, 4, 10)));
  });

  it("rejects unknown keys and bad values", () => {
    expect(() => generate({ size: 3 })).toThrow(/unknown key 'size'/);
    expect(() => generate({ tasks: ["nope"] })).toThrow(/tasks/);
    expect(() => generate({ tasks: [] })).toThrow(/tasks/);
    expect(() => generate({ max_turns: 1.5 })).toThrow(/max_turns/);
  });
});

describe("workspace view", () => {
  it("shows the files and a caption with the task and the turn", () => {
    const meta = generate({ max_turns: 6 })[0]!.extra_env_info as WorkspaceMetadata;
    const view = workspaceEnvironment.view({ ...meta, turn: 2 });
    if (view.kind !== "files") throw new Error("expected a files view");
    expect(view.files.map((f) => f.path)).toEqual(Object.keys(meta.fs.files).sort());
    expect(view.files[0]!.content).toBe(meta.fs.files[view.files[0]!.path]);
    expect(view.caption).toContain(meta.task.instruction);
    expect(view.caption).toContain("turns taken: 2 of 6");
  });

  it("says so when the episode has ended", () => {
    expect(workspaceEnvironment.view(null)).toEqual({
      kind: "files",
      title: "Workspace",
      files: [],
      caption: "No workspace state (the episode has ended).",
    });
  });

  it("names itself 'workspace'", () => {
    expect(workspaceEnvironment.name).toBe("workspace");
    expect(workspaceEnvironment.defaultTaskName).toBe("workspace");
  });
});
