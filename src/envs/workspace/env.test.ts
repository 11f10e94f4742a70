import { describe, expect, it } from "vitest";
import { Rng, type EnvMessage, type Metadata } from "../../core/index.js";
import { VirtualFs } from "./fs.js";
import { workspaceEnvironment } from "./index.js";
import { WorkspaceEnv, type WorkspaceMetadata } from "./env.js";
import { generateTask } from "./tasks.js";
import { LEGACY_NUDGE, STRUCTURED_NUDGE } from "./tools.js";
import { TRUNCATION_MARK } from "./shell.js";

const call = (name: string, args: unknown) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

function sample(extra: Partial<WorkspaceMetadata> = {}): WorkspaceMetadata {
  const { task, files } = generateTask("count_errors", Rng.derive(7, "env-test"));
  return { task, fs: VirtualFs.withFiles(files).toJSON(), turn: 0, ...extra };
}

const say = (text: string): EnvMessage[] => [
  { role: "user", content: "prompt" },
  { role: "assistant", content: text },
];

function stepOne(env: WorkspaceEnv, text: string, metadata: Metadata) {
  const out = env.step([say(text)], [metadata]);
  return {
    observation: out.observations[0]!,
    metadata: out.metadata[0] as WorkspaceMetadata,
    reward: (out.rewards as number[])[0]!,
    terminated: out.terminateds[0]!,
    out,
  };
}

describe("WorkspaceEnv.step", () => {
  it("runs run_shell and returns its output as a user message, not terminated, with no stop strings", () => {
    const env = new WorkspaceEnv();
    const step = stepOne(env, call("run_shell", { command: "echo hi" }), sample());
    expect(step.observation).toEqual({ role: "user", content: "[exit=0]\nhi\n" });
    expect(step).toMatchObject({ reward: 0, terminated: false });
    expect(step.metadata.invalid_action).toBe(false);
    expect(step.metadata.turn).toBe(1);
    expect(step.out.next_stop_strings).toBeNull();
  });

  it("keeps file changes in the returned metadata and never changes its inputs", () => {
    const env = new WorkspaceEnv();
    const metadata = sample();
    const before = structuredClone(metadata);
    const log = say(call("write_file", { path: "notes/a.txt", content: "A" }));
    const logBefore = structuredClone(log);
    const out = env.step([log], [metadata]);
    expect(out.observations[0]!.content).toBe("[exit=0]\nwrote 1 bytes to notes/a.txt\n");
    expect((out.metadata[0] as WorkspaceMetadata).fs.files["/workspace/notes/a.txt"]).toBe("A");
    expect(metadata).toEqual(before);
    expect(log).toEqual(logBefore);
    expect(out.metadata[0]).not.toBe(metadata);
  });

  it("reads a file with read_file", () => {
    const metadata = sample();
    const step = stepOne(new WorkspaceEnv(), call("read_file", { path: "README.md" }), metadata);
    expect(step.observation.content).toBe(`[exit=0]\n${metadata.fs.files["/workspace/README.md"]}`);
  });

  it("stamps an invalid turn, nudges, runs nothing and uses up a turn", () => {
    const env = new WorkspaceEnv();
    for (const text of ["no call at all", call("run_shell", { command: 5 }), call("run_shell", { command: "a" }) + call("run_shell", { command: "b" })]) {
      const metadata = sample();
      const step = stepOne(env, text, metadata);
      expect(step.observation).toEqual({ role: "user", content: STRUCTURED_NUDGE });
      expect(step.metadata.invalid_action).toBe(true);
      expect(step.metadata.turn).toBe(1);
      expect(step.metadata.fs).toEqual(metadata.fs);
    }
  });

  it("grades on task_complete: the verdict alone, reward 1.0 when solved", () => {
    const env = new WorkspaceEnv();
    const metadata = sample();
    const solved = structuredClone(metadata);
    const task = metadata.task as Extract<WorkspaceMetadata["task"], { kind: "count_errors" }>;
    solved.fs.files["/workspace/answer.txt"] = `${task.expected_count}\n`;
    const good = stepOne(env, call("task_complete", {}), solved);
    expect(good).toMatchObject({ reward: 1, terminated: true });
    expect(good.observation.content).toBe("[graded] task solved: reward 1.0");
    expect(good.metadata.verdict).toBe("[graded] task solved: reward 1.0");

    const bad = stepOne(env, call("task_complete", {}), metadata);
    expect(bad).toMatchObject({ reward: 0, terminated: true });
    expect(bad.observation.content).toBe("[graded] task not solved: /workspace/answer.txt was not written; reward 0.0");
  });

  it("on the last turn runs the command, then grades: output and verdict together", () => {
    const env = new WorkspaceEnv({ max_turns: 2 });
    const metadata = sample({ turn: 1 });
    const task = metadata.task as Extract<WorkspaceMetadata["task"], { kind: "count_errors" }>;
    const step = stepOne(env, call("run_shell", { command: `echo ${task.expected_count} > answer.txt && echo done` }), metadata);
    expect(step).toMatchObject({ reward: 1, terminated: true });
    // f"{exec_obs}\n{verdict}".strip(): the output keeps its own final newline.
    expect(step.observation.content).toBe("[exit=0]\ndone\n\n[graded: turn limit of 2 reached] task solved: reward 1.0");
  });

  it("grades after an invalid last turn with the verdict alone", () => {
    const step = stepOne(new WorkspaceEnv({ max_turns: 1 }), "prose", sample());
    expect(step).toMatchObject({ reward: 0, terminated: true });
    expect(step.metadata.invalid_action).toBe(true);
    expect(step.observation.content).toMatch(/^\[graded: turn limit of 1 reached\] task not solved: .*; reward 0\.0$/);
  });

  it("lets the dataset's max_turns in the metadata override the environment's", () => {
    const step = stepOne(new WorkspaceEnv({ max_turns: 8 }), call("run_shell", { command: "true" }), sample({ max_turns: 1 }));
    expect(step.terminated).toBe(true);
  });

  it("legacy mode: runs the first bash block, TASK_COMPLETE grades, a tool call is invalid", () => {
    const env = new WorkspaceEnv({ structured_tools: false });
    const ran = stepOne(env, "Let me look.\n```bash\nls logs\n```", sample());
    expect(ran.observation.content).toMatch(/^\[exit=0\]\n/);
    expect(ran.metadata.invalid_action).toBe(false);
    const invalid = stepOne(env, call("run_shell", { command: "ls" }), sample());
    expect(invalid.observation.content).toBe(LEGACY_NUDGE);
    expect(invalid.metadata.invalid_action).toBe(true);
    const done = stepOne(env, "```bash\necho 0 > answer.txt\n```\nTASK_COMPLETE", sample());
    expect(done.terminated).toBe(true);
    expect(done.observation.content).toMatch(/^\[exit=0\]\n\n?\[graded\] task not solved/);
  });

  it("cuts long output at output_limit", () => {
    const env = new WorkspaceEnv({ output_limit: 30 });
    const step = stepOne(env, call("run_shell", { command: "cat logs/old.log logs/old.log" }), sample());
    expect(step.observation.content).toHaveLength(30 + TRUNCATION_MARK.length);
    expect(step.observation.content.endsWith(TRUNCATION_MARK)).toBe(true);
  });

  it("answers an environment failure with an error observation, reward 0 and done", () => {
    const env = new WorkspaceEnv();
    const broken = stepOne(env, call("run_shell", { command: "ls" }), { task: { kind: "count_errors" }, turn: 0, fs: null });
    expect(broken.observation.content).toBe("[environment error: workspace file system state is missing or malformed]");
    expect(broken).toMatchObject({ reward: 0, terminated: true });
    expect(stepOne(env, "x", null).observation.content).toBe("[environment error: workspace: the sample has no metadata]");
  });

  it("steps several samples independently, in order", () => {
    const env = new WorkspaceEnv();
    const out = env.step(
      [say(call("run_shell", { command: "echo a" })), say("nothing"), say(call("task_complete", {}))],
      [sample(), sample(), sample()],
    );
    expect(out.observations.map((o) => o.content)).toEqual([
      "[exit=0]\na\n",
      STRUCTURED_NUDGE,
      "[graded] task not solved: /workspace/answer.txt was not written; reward 0.0",
    ]);
    expect(out.terminateds).toEqual([false, false, true]);
    expect((out.metadata as WorkspaceMetadata[]).map((m) => m.invalid_action)).toEqual([false, true, false]);
  });

  it("rejects unknown or ill-typed config keys", () => {
    expect(() => workspaceEnvironment.create({ turns: 3 })).toThrow(/unknown key 'turns'/);
    expect(() => workspaceEnvironment.create({ max_turns: 0 })).toThrow(/max_turns/);
    expect(() => workspaceEnvironment.create({ structured_tools: "yes" })).toThrow(/structured_tools/);
    expect(workspaceEnvironment.create({ output_limit: 100 })).toBeInstanceOf(WorkspaceEnv);
  });
});
