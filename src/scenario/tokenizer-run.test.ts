// The scenario's `tokenizer` key and raw datum `messages` on the real Qwen3 vocabulary (issue 17 items 2-5): text
// policies tokenize with Qwen3's tokenizer, prompts are rendered with its chat template (equal to Hugging Face's own
// Python rendering, fixtures/qwen3-renders/renders.json), every message's ids are its content encoded, an assistant's
// content is the decode of its ids per the decode choice, and the template envelope is the real template's (the
// token check finds the run consistent). The tokenizer (11 MB) is loaded once for the file.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { byteLevelTokenizer, SESSION_TOOLS, type Message, type TokenizerInterface } from "../core/index.js";
import { calculatorUserText } from "../envs/calculator/index.js";
import { PUZZLE_SYSTEM_PROMPT } from "../envs/sliding-puzzle/dataset.js";
import { puzzleUserText } from "../envs/sliding-puzzle/index.js";
import { WORKSPACE_SYSTEM_PROMPT, workspaceUserText } from "../envs/workspace/index.js";
import { vocabularyOf, vocabularyTokenizer } from "../cli/training-vocabulary.js";
import { loadNodeModelPolicy } from "../policy/llm/node.js";
import { startStandInHub } from "../policy/llm/stand-in-hub.fixture.js";
import { loadPolicyTokenizer, loadTokenizerFolder, qwen3TokenizerFolder, type LoadedTokenizer } from "../policy/llm/tokenizer-load.js";
import type { RolloutResultJson } from "./result.js";
import { inputBatchFor, prepareScenario, rendersOwnTemplate, runScenario, type LoadedPolicy } from "./run.js";
import { parseScenario, ScenarioError } from "./schema.js";
import { checkSample } from "./token-check.js";

const HERE = dirname(fileURLToPath(import.meta.url));

interface RenderCase {
  name: string;
  messages: { role: string; content: string }[];
  tools?: unknown[];
  add_generation_prompt: boolean;
  rendered: string;
}
const fixtures = JSON.parse(readFileSync(join(HERE, "fixtures/qwen3-renders/renders.json"), "utf8")) as { cases: RenderCase[] };

let qwen3: TokenizerInterface;
let check: LoadedTokenizer;
beforeAll(async () => {
  qwen3 = await loadPolicyTokenizer("builtin:tiny-qwen3");
  check = await loadTokenizerFolder(qwen3TokenizerFolder(), "builtin:tiny-qwen3");
}, 60_000);

const options = () => ({ textTokenizer: async () => qwen3 });

const CALL = (command: string) => `<tool_call>\n{"name": "run_shell", "arguments": {"command": "${command}"}}\n</tool_call>`;

function workspaceScenario(extra: Record<string, unknown>, size = 2) {
  return parseScenario({
    mode: "sync",
    max_seq_len: 6000,
    max_rollout_turns: 2,
    tokenizer: "builtin:tiny-qwen3",
    envs: { ws: { env: "workspace", config: {} } },
    dataset: { task_name: "ws", size, seed: 3 },
    structured: { enabled: true, envelope: "template" },
    policy: { kind: "scripted", responses: Array.from({ length: size }, () => [CALL("ls /workspace"), CALL("pwd")]) },
    ...extra,
  });
}

/** The checks every message of a run on Qwen3 passes: ids are the content encoded; assistants decode per the choice. */
function expectTokenIdsOfContent(result: RolloutResultJson, skipSpecial: boolean, structured: boolean) {
  for (const s of result.samples) {
    for (const m of s.message_log) {
      if (m.role === "assistant") expect(m.content).toBe(qwen3.decode(m.token_ids, { skipSpecialTokens: skipSpecial }));
      else if (!structured || m === s.message_log[0]) expect(m.token_ids).toEqual(qwen3.encode(m.content));
    }
  }
}

const consistency = (result: RolloutResultJson, structured = true) =>
  result.samples.map((s) => checkSample({ messageLog: s.message_log, structured }, check));

describe("raw datum messages rendered with the active template", () => {
  // A datum's raw messages are {role, content} (scenario-format.md): the cases without tool_calls.
  const withPrompt = fixtures.cases.filter((c) => c.add_generation_prompt && c.messages.every((m) => Object.keys(m).every((k) => k === "role" || k === "content")));

  it("has generation-prompt fixtures with tools, non-ASCII text and an emoji", () => {
    expect(withPrompt.some((c) => c.tools)).toBe(true);
    expect(withPrompt.map((c) => c.rendered).join("")).toMatch(/\p{Extended_Pictographic}/u);
    expect(withPrompt.map((c) => c.rendered).join("")).toMatch(/[^\x00-\x7f]/);
  });

  it.each(withPrompt.map((c) => [c.name, c] as const))("%s: the initial message is Hugging Face's rendering, its ids encoded", async (_n, c) => {
    const scenario = parseScenario({
      mode: "sync",
      max_seq_len: 4000,
      max_rollout_turns: 1,
      tokenizer: "builtin:tiny-qwen3",
      envs: { calc: { env: "calculator", config: {} } },
      samples: [{ task_name: "calc", messages: c.messages, ...(c.tools ? { tools: c.tools } : {}) }],
      policy: { kind: "scripted", responses: [["4"]] },
    });
    const prepared = await prepareScenario(scenario);
    const batch = inputBatchFor(prepared, qwen3);
    const log = batch.rows()[0]!.message_log as Message[];
    expect(log).toHaveLength(1);
    expect(log[0]!.role).toBe("user");
    expect(log[0]!.content).toBe(c.rendered);
    expect(log[0]!.token_ids).toEqual(check.encode(c.rendered));
    // The same datum without the key: the built-in ChatML rendering, byte-level ids.
    const plain = parseScenario({ ...scenario, tokenizer: undefined });
    const bytes = (inputBatchFor(await prepareScenario(plain)).rows()[0]!.message_log as Message[])[0]!;
    expect(bytes.content.startsWith("<|im_start|>")).toBe(true);
    expect(bytes.content.endsWith("<|im_start|>assistant\n")).toBe(true);
  });

  it("a datum gives exactly one of message_log and messages; tools only with messages", () => {
    const base = { mode: "sync", max_seq_len: 10, max_rollout_turns: 1, envs: { c: { env: "calculator" } }, policy: { kind: "scripted", responses: [] } };
    const m = [{ role: "user", content: "x" }];
    expect(() => parseScenario({ ...base, samples: [{ task_name: "c", message_log: m, messages: m }] })).toThrow(
      "samples[0].messages: expected exactly one of message_log and messages",
    );
    expect(() => parseScenario({ ...base, samples: [{ task_name: "c" }] })).toThrow("samples[0].message_log: expected exactly one of message_log and messages");
    expect(() => parseScenario({ ...base, samples: [{ task_name: "c", message_log: m, tools: [] }] })).toThrow("samples[0].tools: tools go with messages");
    expect(() => parseScenario({ ...base, samples: [{ task_name: "c", messages: m, tools: [{}] }] })).not.toThrow();
  });

  it("a model policy's tokenizer naming another model is an error naming the field", () => {
    const s = { mode: "sync", max_seq_len: 10, max_rollout_turns: 1, envs: { c: { env: "calculator" } }, dataset: { task_name: "c", size: 1, seed: 0 } };
    expect(() => parseScenario({ ...s, tokenizer: "builtin:tiny-qwen3", policy: { kind: "model", model: "builtin:tiny" } })).toThrow(ScenarioError);
    expect(() => parseScenario({ ...s, tokenizer: "builtin:tiny-qwen3", policy: { kind: "model", model: "builtin:tiny" } })).toThrow(
      "tokenizer: 'builtin:tiny-qwen3' is not the model policy's model 'builtin:tiny'",
    );
    expect(() => parseScenario({ ...s, tokenizer: "builtin:tiny-qwen3", policy: { kind: "model", model: "builtin:tiny-qwen3" } })).not.toThrow();
  });

  it("a tokenizer that cannot be loaded fails the run naming the field (a hub id the hub lacks, a missing folder)", async () => {
    const hub = await startStandInHub({});
    try {
      const node = { textTokenizer: (spec: string) => loadPolicyTokenizer(spec, { remoteHost: hub.url, cacheDir: hub.cacheDir }) };
      await expect(runScenario(workspaceScenario({ tokenizer: "Qwen/Qwen3-0.6B" }), node)).rejects.toThrow(
        `tokenizer: tokenizer 'Qwen/Qwen3-0.6B': could not load it from the hub (${hub.url})`,
      );
      await expect(runScenario(workspaceScenario({ tokenizer: "./no/such/folder" }), node)).rejects.toThrow(/^tokenizer: tokenizer '.\/no\/such\/folder': no such folder /);
    } finally {
      await hub.close();
    }
    const node = { textTokenizer: loadPolicyTokenizer };
    await expect(runScenario(workspaceScenario({ tokenizer: "builtin:nope" }), node)).rejects.toThrow("tokenizer: unknown built-in tokenizer 'builtin:nope'");
    await expect(runScenario(workspaceScenario({}))).rejects.toThrow("tokenizer: this runner cannot load the tokenizer 'builtin:tiny-qwen3'");
  });
});

describe("a hub id as the tokenizer (fetched as a model policy's is; here from a stand-in hub)", () => {
  it("runs as builtin:tiny-qwen3 does when the hub serves Qwen3's files under that id", async () => {
    const hub = await startStandInHub({ "org/qwen3-tokenizer": qwen3TokenizerFolder() });
    try {
      const fromHub = await runScenario(workspaceScenario({ tokenizer: "org/qwen3-tokenizer" }), {
        textTokenizer: (spec) => loadPolicyTokenizer(spec, { remoteHost: hub.url, cacheDir: hub.cacheDir }),
      });
      const builtin = await runScenario(workspaceScenario({}), options());
      const logs = (r: RolloutResultJson) => r.samples.map((s) => s.message_log.map((m) => m.token_ids));
      expect(logs(fromHub)).toEqual(logs(builtin));
      expect(hub.requests).toContain("/org/qwen3-tokenizer/resolve/main/tokenizer.json");
    } finally {
      await hub.close();
    }
  });
});

describe("the example scenario with raw messages on Qwen3 (examples/qwen3-calculator-messages.json)", () => {
  it("renders its messages with Qwen3's template and solves the problem in Qwen3's tokens", async () => {
    const scenario = parseScenario(JSON.parse(readFileSync(join(HERE, "examples/qwen3-calculator-messages.json"), "utf8")));
    const result = await runScenario(scenario, { textTokenizer: loadPolicyTokenizer });
    const [s] = result.samples;
    expect(s!.total_reward).toBe(1);
    expect(s!.message_log[0]!.content).toBe(check.applyChatTemplate(scenario.samples![0]!.messages!, { addGenerationPrompt: true }));
    expectTokenIdsOfContent(result, true, false);
  });
});

describe("built-in datasets through the real template", () => {
  it("each environment's prompt is the template's rendering of its raw messages (the workspace's session tools as tools)", async () => {
    const one = async (env: string) => {
      const scenario = parseScenario({
        mode: "sync",
        max_seq_len: 4000,
        max_rollout_turns: 1,
        tokenizer: "builtin:tiny-qwen3",
        envs: { t: { env, config: {} } },
        dataset: { task_name: "t", size: 1, seed: 5 },
        policy: { kind: "scripted", responses: [["x"]] },
      });
      const prepared = await prepareScenario(scenario);
      return { datum: prepared.data[0]!, prompt: (inputBatchFor(prepared, qwen3).rows()[0]!.message_log as Message[])[0]! };
    };
    const gen = { addGenerationPrompt: true };
    const calc = await one("calculator");
    const problem = (calc.datum.extra_env_info as { problem: string }).problem;
    expect(calc.prompt.content).toBe(check.applyChatTemplate([{ role: "user", content: calculatorUserText(problem) }], gen));
    const puzzle = await one("sliding_puzzle");
    const state = (puzzle.datum.extra_env_info as { game_state: Parameters<typeof puzzleUserText>[0] }).game_state;
    expect(puzzle.prompt.content).toBe(
      check.applyChatTemplate([{ role: "system", content: PUZZLE_SYSTEM_PROMPT }, { role: "user", content: puzzleUserText(state) }], gen),
    );
    expect(puzzle.prompt.content.endsWith("<|im_start|>assistant\n")).toBe(true); // not strip()ped: the template's own
    const ws = await one("workspace");
    const task = (ws.datum.extra_env_info as { task: Parameters<typeof workspaceUserText>[0] }).task;
    expect(ws.prompt.content).toBe(
      check.applyChatTemplate(
        [{ role: "system", content: WORKSPACE_SYSTEM_PROMPT }, { role: "user", content: workspaceUserText(task, true) }],
        { ...gen, tools: SESSION_TOOLS.chatTemplateTools() },
      ),
    );
    for (const p of [calc.prompt, puzzle.prompt, ws.prompt]) expect(p.token_ids).toEqual(check.encode(p.content));
  });
});

describe("runs on the Qwen3 vocabulary", () => {
  it.each(["sync", "async"] as const)("%s, unstructured (calculator oracle): ids are the content encoded, prompts the template's", async (mode) => {
    const scenario = parseScenario({
      mode,
      max_seq_len: 4000,
      max_rollout_turns: 6,
      tokenizer: "builtin:tiny-qwen3",
      envs: { c: { env: "calculator", config: {} } },
      dataset: { task_name: "c", size: 2, seed: 1 },
      policy: { kind: "oracle", seed: 0 },
    });
    const result = await runScenario(scenario, options());
    expect(result.samples.every((s) => s.total_reward === 1)).toBe(true);
    expectTokenIdsOfContent(result, true, false);
    // The oracle's ids are Qwen3's (some merge several characters), not bytes.
    const a = result.samples[0]!.message_log[1]!;
    expect(a.token_ids.length).toBeLessThan(new TextEncoder().encode(a.content).length);
  });

  it.each([
    ["sync", "paired"],
    ["async", "paired"],
    ["sync", "closing_only"],
    ["async", "closing_only"],
  ] as const)("%s, structured, thinking %s, both envelopes: the template envelope is consistent, the fork's drifts", async (mode, style) => {
    const think = style === "paired" ? "<think>\nList it.\n</think>\n\n" : "List it.\n</think>\n\n";
    const responses = [[`${think}${CALL("ls /workspace")}`, `${think}${CALL("pwd")}`], [`${think}${CALL("pwd")}`, `${think}${CALL("ls")}`]];
    const run = (envelope: "fork" | "template") =>
      runScenario(
        workspaceScenario({ mode, structured: { enabled: true, envelope, thinking_style: style }, policy: { kind: "scripted", responses } }),
        options(),
      );
    const template = await run("template");
    const fork = await run("fork");
    for (const r of [template, fork]) {
      expectTokenIdsOfContent(r, true, true);
      expect(r.samples.map((s) => [s.message_log.length, s.termination])).toEqual([
        [5, "max_turns"],
        [5, "max_turns"],
      ]);
    }
    // The observation is a Qwen3 tool turn: after the assistant's <|im_end|>, the template's `\n` and user header.
    const obs = template.samples[0]!.message_log[2]!;
    expect(qwen3.decode(obs.token_ids)).toBe(
      `\n<|im_start|>user\n<tool_response>\n${obs.content}\n</tool_response><|im_end|>\n<|im_start|>assistant\n`,
    );
    const verdicts = consistency(template);
    const forkVerdicts = consistency(fork);
    if (style === "paired") {
      expect(verdicts.every((v) => v.consistent)).toBe(true);
      expect(forkVerdicts.map((v) => [v.first_divergence?.message_index, v.first_divergence?.reason])).toEqual([
        [2, "observation_envelope"],
        [2, "observation_envelope"],
      ]);
    } else {
      // Qwen3's generation prompt opens no think block: a closing-only turn is not how its template writes it, in
      // either envelope (the drift is in the first assistant turn, before any observation).
      for (const v of [...verdicts, ...forkVerdicts]) {
        expect(v.consistent).toBe(false);
        expect(v.first_divergence!.message_index).toBe(1);
      }
    }
  }, 60_000);

  it("turns not written as Qwen3's template writes them drift in the template envelope (think whitespace)", async () => {
    const responses = [[`<think>List it.</think>${CALL("ls /workspace")}`, `<think>Again.</think>${CALL("pwd")}`]];
    const result = await runScenario(workspaceScenario({ policy: { kind: "scripted", responses } }, 1), options());
    expectTokenIdsOfContent(result, true, true);
    // The envelope still follows the turn (the template closes it with its own end-of-turn token, then the tool turn).
    const obs = result.samples[0]!.message_log[2]!;
    expect(qwen3.decode(obs.token_ids).startsWith("\n<|im_start|>user\n<tool_response>\n")).toBe(true);
    const [v] = consistency(result);
    expect(v!.consistent).toBe(false);
    expect(v!.first_divergence!.reason).toBe("think_whitespace");
  });

  it.each([
    [true, false],
    [false, true],
    [null, false],
  ] as const)("the fork's decode choice decode_skip_special_tokens=%s: the end-of-turn token kept in content: %s", async (skip, kept) => {
    const scenario = workspaceScenario(
      { structured: { enabled: true, envelope: "template", decode_skip_special_tokens: skip }, policy: { kind: "scripted", responses: [[CALL("ls"), CALL("pwd")]] } },
      1,
    );
    const result = await runScenario(scenario, options());
    // null: the auto-probe; Qwen3's <tool_call> is an added, non-special token, so it survives a skipping decode.
    expectTokenIdsOfContent(result, skip ?? true, true);
    const assistant = result.samples[0]!.message_log[1]!;
    expect(assistant.token_ids.at(-1)).toBe(qwen3.eosTokenId);
    expect(assistant.content.endsWith("<|im_end|>")).toBe(kept);
    expect(assistant.content).toContain("<tool_call>");
    expect(consistency(result).every((v) => v.consistent)).toBe(true);
  });
});

describe("a model policy's prompts are rendered with its own chat template", () => {
  const modelPolicy = async (spec: Parameters<typeof loadNodeModelPolicy>[0]): Promise<LoadedPolicy> => {
    const policy = await loadNodeModelPolicy(spec);
    return { generation: policy, tokenizer: policy.tokenizer, dispose: () => policy.dispose() };
  };
  const base = (extra: Record<string, unknown>) =>
    parseScenario({
      mode: "sync",
      max_seq_len: 6000,
      max_rollout_turns: 1,
      max_new_tokens: 4,
      // The puzzle: its built-in ChatML prompt (the reference's strip()) differs from the template's rendering.
      envs: { p: { env: "sliding_puzzle", config: {} } },
      dataset: { task_name: "p", size: 1, seed: 2 },
      ...extra,
    });
  const prompt = (result: RolloutResultJson) => result.samples[0]!.message_log[0]!;

  it("tells the byte-level tokenizer from a real one by how it tokenizes, not by its name", async () => {
    expect(rendersOwnTemplate(byteLevelTokenizer)).toBe(false);
    expect(rendersOwnTemplate(qwen3)).toBe(true);
    // A tokenizer whose template cannot render (a base model's, without one) keeps the built-in ChatML.
    const noTemplate: TokenizerInterface = {
      encode: (t) => qwen3.encode(t),
      decode: (ids, o) => qwen3.decode(ids, o),
      padTokenId: qwen3.padTokenId,
      eosTokenId: qwen3.eosTokenId,
      applyChatTemplate: () => {
        throw new Error("Cannot use chat template functions because tokenizer.chat_template is not set");
      },
    };
    expect(rendersOwnTemplate(noTemplate)).toBe(false);
    // The lab's vocabulary with byte-pair merges of its own (a builtin:trained that has them): the built-in ChatML.
    const merged = await vocabularyTokenizer(vocabularyOf([["A", "b"], ["t", "h"], ["<", "th"]]));
    expect(merged.encode("Ab")).toEqual([265]);
    expect(rendersOwnTemplate(merged)).toBe(false);
    const tiny = await loadNodeModelPolicy({ model: "builtin:tiny" });
    try {
      expect(rendersOwnTemplate(tiny.tokenizer)).toBe(false); // its own folder's template is not asked for
    } finally {
      await tiny.dispose();
    }
  });

  it("builtin:tiny-qwen3 without the key: Qwen3's template, as a text policy naming it", async () => {
    const model = await runScenario(base({ policy: { kind: "model", model: "builtin:tiny-qwen3" } }), { modelPolicy });
    const scripted = await runScenario(
      base({ tokenizer: "builtin:tiny-qwen3", policy: { kind: "scripted", responses: [["x"]] } }),
      options(),
    );
    expect(prompt(model)).toEqual(prompt(scripted));
    expect(prompt(model).content).toMatch(/<\|im_start\|>assistant\n$/);
    expect(prompt(model).token_ids).toEqual(qwen3.encode(prompt(model).content));
  }, 60_000);

  it("builtin:tiny (the byte-level vocabulary): the built-in ChatML, as a text policy without the key", async () => {
    const model = await runScenario(base({ policy: { kind: "model", model: "builtin:tiny" } }), { modelPolicy });
    const scripted = await runScenario(base({ policy: { kind: "scripted", responses: [["x"]] } }));
    expect(prompt(model)).toEqual(prompt(scripted));
    expect(prompt(model).content).toMatch(/<\|im_start\|>assistant$/);
  }, 60_000);
});

describe("a replay of a run saved with another tokenizer", () => {
  const calculator = () => JSON.parse(readFileSync(join(HERE, "examples/calculator-scripted.json"), "utf8")) as Record<string, unknown>;
  const assistantTurns = (result: RolloutResultJson) => result.samples.map((s) => s.message_log.filter((m) => m.role === "assistant").map((m) => m.content));

  it("replays the saved turns' text: a byte-level run on Qwen3's vocabulary, and a Qwen3 run on the byte-level one", async () => {
    const byteRun = await runScenario(parseScenario(calculator()));
    const onQwen3 = await runScenario(parseScenario({ ...calculator(), tokenizer: "builtin:tiny-qwen3", policy: { kind: "replay", file: "run.json" } }), {
      ...options(),
      loadFile: async () => JSON.stringify(byteRun),
    });
    // Before, the byte-level ids were decoded as Qwen3's: other text, which the environment refused.
    expect(assistantTurns(onQwen3)).toEqual(assistantTurns(byteRun));
    expect(onQwen3.samples.map((s) => s.total_reward)).toEqual(byteRun.samples.map((s) => s.total_reward));

    const qwen3Run = await runScenario(parseScenario({ ...calculator(), tokenizer: "builtin:tiny-qwen3" }), options());
    // Before, the whole run failed: "token id … is outside the byte-level vocabulary".
    const onBytes = await runScenario(parseScenario({ ...calculator(), policy: { kind: "replay", file: "run.json" } }), { loadFile: async () => JSON.stringify(qwen3Run) });
    expect(assistantTurns(onBytes)).toEqual(assistantTurns(qwen3Run));
  });
});
