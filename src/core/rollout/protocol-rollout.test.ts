import { describe, expect, it } from "vitest";
import { scriptedPolicy } from "../../policy/scripted.js";
import { BatchedDataDict } from "../batch.js";
import { renderChatTemplate } from "../protocol/chat-template.js";
import { byteLevelTokenizer as tok, ByteLevelTokenizer } from "../tokenizer/byte-level.js";
import type { EnvironmentInterface, Message } from "../types.js";
import { runAsyncMultiTurnRollout } from "./async.js";
import type { RolloutEvent } from "./events.js";
import { calculateRewards } from "./rewards.js";
import { streamRollout } from "./stream.js";
import { runMultiTurnRollout } from "./sync.js";

const echo: EnvironmentInterface = {
  step: (logs) => ({
    observations: logs.map((log) => ({ role: "tool", content: `saw ${log.length}` })),
    metadata: logs.map(() => null),
    next_stop_strings: null,
    rewards: logs.map(() => 0.5),
    terminateds: logs.map((log) => log.length >= 4),
    answers: null,
  }),
};

const promptText = renderChatTemplate([{ role: "user", content: "go" }], { addGenerationPrompt: true });
const input = (stop: string[] | null = null) =>
  new BatchedDataDict({
    message_log: [[{ role: "user", content: promptText, token_ids: tok.encode(promptText) }]],
    extra_env_info: [null],
    task_name: ["echo"],
    stop_strings: [stop],
  });

describe("the template envelope (decision 8)", () => {
  it("makes the token sequence equal the chat template's render of the conversation", async () => {
    const [batch] = await runMultiTurnRollout({
      policyGeneration: scriptedPolicy([["first", "second"]], tok),
      tokenizer: tok,
      taskToEnv: { echo },
      inputBatch: input(),
      maxSeqLen: 2048,
      structuredCfg: { enabled: true, envelope: "template" },
    });
    const log = batch.get("message_log")[0] as Message[];
    const fed = tok.decode(log.flatMap((m) => m.token_ids));
    const rendered = renderChatTemplate(
      [
        { role: "user", content: "go" },
        { role: "assistant", content: "first" },
        { role: "tool", content: "saw 2" },
        { role: "assistant", content: "second" },
        { role: "tool", content: "saw 4" },
      ],
      { addGenerationPrompt: true },
    );
    expect(fed).toBe(rendered);
  });

  it("closes the turn itself after a response cut at a stop string, and adds a template's think prefill", async () => {
    const thinking = Object.assign(new ByteLevelTokenizer(), { generationPrefill: "<think>\n" });
    const [batch] = await runAsyncMultiTurnRollout({
      policyGeneration: scriptedPolicy([["call!", "done"]], thinking),
      tokenizer: thinking,
      taskToEnv: { echo },
      inputBatch: input(["!"]),
      maxSeqLen: 2048,
      structuredCfg: { enabled: true, envelope: "template" },
    });
    const log = batch.get("message_log")[0] as Message[];
    expect(tok.decode(log[2]!.token_ids)).toBe(
      "<|im_end|>\n<|im_start|>user\n<tool_response>\nsaw 2\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n",
    );
    expect(log[2]!.content).toBe("saw 2");
  });
});

describe("calculateRewards", () => {
  it("steps each task once, in order of first appearance, and returns fields in input order", async () => {
    const calls: string[] = [];
    const env = (name: string): EnvironmentInterface => ({
      step: (logs) => {
        calls.push(`${name}:${logs.length}`);
        return { observations: logs.map(() => ({ role: "user", content: name })), metadata: logs.map(() => ({ by: name })), next_stop_strings: null, rewards: logs.map(() => (name === "a" ? 1 : 2)), terminateds: logs.map(() => name === "b"), answers: null };
      },
    });
    const m = (c: string): Message[] => [{ role: "assistant", content: c, token_ids: [] }];
    const ret = await calculateRewards(
      new BatchedDataDict({ message_log: [m("x"), m("y"), m("z")], extra_env_info: [null, null, null], task_name: ["b", "a", "b"] }),
      { a: env("a"), b: env("b") },
    );
    expect(calls).toEqual(["b:2", "a:1"]);
    expect(ret.observations.map((o) => o.content)).toEqual(["b", "a", "b"]);
    expect(ret.rewards).toEqual([2, 1, 2]);
    expect(ret.terminateds).toEqual([true, false, true]);
    expect(ret.next_stop_strings).toEqual([null, null, null]);
    await expect(
      calculateRewards(new BatchedDataDict({ message_log: [m("x")], extra_env_info: [null], task_name: ["c"] }), {}),
    ).rejects.toThrow("No environment found for task type: c");
  });
});

describe("streamRollout", () => {
  it("yields every event in order as an async iterable", async () => {
    const seen: RolloutEvent["type"][] = [];
    for await (const event of streamRollout((onEvent) =>
      runMultiTurnRollout({ policyGeneration: scriptedPolicy([["a", "b"]], tok), tokenizer: tok, taskToEnv: { echo }, inputBatch: input(), maxSeqLen: 512, onEvent }),
    )) {
      if (event.type !== "token") seen.push(event.type);
    }
    expect(seen[0]).toBe("rollout_start");
    expect(seen.at(-1)).toBe("rollout_end");
    expect(seen.filter((t) => t === "env_step")).toHaveLength(2);
  });

  it("re-throws a failed rollout after its events", async () => {
    const seen: string[] = [];
    const iterate = async () => {
      for await (const event of streamRollout((onEvent) =>
        runMultiTurnRollout({ policyGeneration: scriptedPolicy([[]], tok), tokenizer: tok, taskToEnv: { echo }, inputBatch: input(), maxSeqLen: 512, failFast: true, onEvent }),
      )) seen.push(event.type);
    };
    await expect(iterate()).rejects.toThrow(/generation failed/);
    expect(seen.at(-1)).toBe("rollout_error");
  });
});

describe("environment metadata that cannot be copied", () => {
  it("fails that sample with a message naming the field", async () => {
    const bad: EnvironmentInterface = {
      step: (logs) => ({ observations: logs.map(() => ({ role: "user", content: "o" })), metadata: logs.map(() => ({ f: () => 1 })), next_stop_strings: null, rewards: logs.map(() => 0), terminateds: logs.map(() => false), answers: null }),
    };
    const [batch] = await runMultiTurnRollout({ policyGeneration: scriptedPolicy([["a"]], tok), tokenizer: tok, taskToEnv: { echo: bad }, inputBatch: input(), maxSeqLen: 512 });
    expect(batch.get("termination")).toEqual(["error"]);
    expect((batch.get("error") as string[])[0]).toMatch(/^environment 'echo' returned an invalid metadata for sample 0: it cannot be copied/);
  });
});
