/**
 * `npm run tokens -- check` (its `main(argv)`, in-process): verdicts and exit codes on the lab's own byte-level runs
 * (the template envelope consistent, the fork's not), on a JSONL export whose scenario names Qwen3's tokenizer and
 * gives raw messages, and clear errors (exit 2) for bad usage and input.
 */

import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { loadTokenizerFolder, qwen3TokenizerFolder, type LoadedTokenizer } from "../policy/llm/tokenizer-load.js";
import { exportJsonl, importJsonl } from "../app/run/jsonl.js";
import { main as rollout } from "./rollout.js";
import { main } from "./tokens.js";

const examples = join(import.meta.dirname, "../scenario/examples");

async function run(argv: string[], fn = main): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
  try {
    return { code: await fn(argv), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

let dir: string;
let qwen3: LoadedTokenizer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tokens-cli-"));
  qwen3 = await loadTokenizerFolder(qwen3TokenizerFolder(), "builtin:tiny-qwen3");
}, 60_000);

/** The workspace example with the given envelope, run headless: its scenario and result files. */
async function workspaceRun(envelope: "fork" | "template"): Promise<{ scenario: string; result: string }> {
  const scenario = JSON.parse(await readFile(join(examples, "workspace-structured.json"), "utf8")) as { structured: Record<string, unknown> };
  scenario.structured.envelope = envelope;
  const paths = { scenario: join(dir, `ws-${envelope}.json`), result: join(dir, `ws-${envelope}.result.json`) };
  await writeFile(paths.scenario, JSON.stringify(scenario));
  expect((await run([paths.scenario, "--out", paths.result], rollout)).code).toBe(0);
  return paths;
}

describe("byte-level runs of the lab", () => {
  it("a structured run in the template envelope is consistent (exit 0)", async () => {
    const { scenario, result } = await workspaceRun("template");
    const { code, stdout } = await run(["check", result, "--scenario", scenario]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^3 samples: 3 consistent, 0 drifting; tokenizer byte-level \(ChatML\); structured \(the scenario's structured block\)$/m);
  });

  it("the lab's JSONL export of that run carries its scenario: structured from it, consistent", async () => {
    const { scenario, result } = await workspaceRun("template");
    const samples = (JSON.parse(await readFile(result, "utf8")) as { samples: unknown[] }).samples;
    const { model } = importJsonl(samples.map((x) => JSON.stringify(x)).join("\n"));
    const path = join(dir, "ws-template.jsonl");
    await writeFile(path, exportJsonl(model, JSON.parse(await readFile(scenario, "utf8"))));
    const { code, stdout } = await run(["check", path]);
    expect(stdout).toContain("3 samples: 3 consistent, 0 drifting; tokenizer byte-level (ChatML); structured (the scenario's structured block)");
    expect(code).toBe(0);
  });

  it("the fork's envelope drifts at the first observation (exit 1), in the --json shape", async () => {
    const { result } = await workspaceRun("fork");
    const { code, stdout } = await run(["check", result, "--json"]);
    expect(code).toBe(1);
    const report = JSON.parse(stdout) as { samples: Record<string, unknown>[]; summary: Record<string, unknown> };
    expect(Object.keys(report)).toEqual(["samples", "summary"]);
    expect(Object.keys(report.samples[0]!)).toEqual(["idx", "consistent", "first_divergence"]);
    expect(report.samples[0]).toMatchObject({ idx: 0, consistent: false, first_divergence: { message_index: 2, reason: "observation_envelope", ours: ["<|im_start|>", "u", "s", "e", "r", "\n"], template: ["\n", "<|im_start|>", "u", "s", "e", "r"] } });
    expect(Object.keys(report.samples[0]!.first_divergence as object)).toEqual(["token_index", "message_index", "ours", "template", "reason"]);
    expect(report.summary).toMatchObject({ samples: 3, consistent: 0, drifting: 3, reasons: { observation_envelope: 3 } });
  });
});

describe("a JSONL export on Qwen3's tokenizer", () => {
  const tools = [{ type: "function", function: { name: "run_shell", description: "Run a command 🙂", parameters: { type: "object", properties: { command: { type: "string" } } } } }];
  const messages = [{ role: "user", content: "Zähle die Zeilen von a.txt" }];
  const call = '<tool_call>\n{"name": "run_shell", "arguments": {"command": "wc -l a.txt"}}\n</tool_call>';

  /** An export: one line per sample (logs written as a rollout writes them) and the footer with the scenario. */
  async function exportFile(name: string, turns: string[]): Promise<string> {
    const enc = (role: string, content: string, tokens = content) => ({ role, content, token_ids: qwen3.encode(tokens) });
    const log = [enc("user", qwen3.applyChatTemplate(messages, { tools, addGenerationPrompt: true }))];
    for (const turn of turns) {
      log.push(enc("assistant", turn, `${turn}<|im_end|>`));
      log.push(enc("user", "3 a.txt", "\n<|im_start|>user\n<tool_response>\n3 a.txt\n</tool_response><|im_end|>\n<|im_start|>assistant\n"));
    }
    const scenario = { tokenizer: "builtin:tiny-qwen3", structured: { enabled: true, envelope: "template" }, samples: [{ task_name: "workspace", messages, tools }] };
    const lines = [
      JSON.stringify({ idx: 0, task_name: "workspace", message_log: log, "lab/prompt_messages": 1 }),
      JSON.stringify({ "lab/format": "rollout-lab-run/1", mode: "async", metrics: {}, scenario }),
    ];
    const path = join(dir, name);
    await writeFile(path, `${lines.join("\n")}\n`);
    return path;
  }

  it("turns written as the template writes them are consistent; the scenario's tokenizer and raw messages are used", async () => {
    const path = await exportFile("qwen3-ok.jsonl", [`<think>\nUse wc.\n</think>\n\n${call}`]);
    const { code, stdout } = await run(["check", path]);
    expect(stdout).toContain("1 samples: 1 consistent, 0 drifting; tokenizer builtin:tiny-qwen3; structured");
    expect(code).toBe(0);
  });

  it("the same turns written otherwise drift: whitespace around a think block", async () => {
    const path = await exportFile("qwen3-drift.jsonl", [`<think>Use wc.</think>${call}`]);
    const { code, stdout } = await run(["check", path]);
    expect(code).toBe(1);
    expect(stdout).toContain("sample 0 (idx 0): drifts at token");
    expect(stdout).toContain("(message 1, assistant): think_whitespace");
    expect(stdout).toMatch(/ours: {5}"Use"/);
    expect(stdout).toMatch(/template: "\\n" "Use"/);
  });
});

describe("runs on a real tokenizer that the check once could not read", () => {
  it("an assistant turn cut to no tokens (the prompt filled max_seq_len) gets a verdict, not an error", async () => {
    const scenario = {
      mode: "sync",
      max_seq_len: 15,
      max_rollout_turns: 2,
      tokenizer: "builtin:tiny-qwen3",
      envs: { c: { env: "calculator", config: {} } },
      samples: [{ task_name: "c", messages: [{ role: "user", content: "What is 2+2?" }], extra_env_info: {} }],
      policy: { kind: "scripted", responses: [["<answer>4</answer>"]] },
    };
    const paths = { scenario: join(dir, "cut.json"), result: join(dir, "cut.result.json") };
    await writeFile(paths.scenario, JSON.stringify(scenario));
    expect((await run([paths.scenario, "--out", paths.result], rollout)).code).toBe(0);
    const result = JSON.parse(await readFile(paths.result, "utf8")) as { samples: { message_log: { role: string; token_ids: number[] }[] }[] };
    expect(result.samples[0]!.message_log.at(-1)).toMatchObject({ role: "assistant", token_ids: [] });
    const { code, stdout, stderr } = await run(["check", paths.result, "--scenario", paths.scenario]);
    expect(stderr).toBe("");
    expect(code).toBe(1);
    expect(stdout).toContain("1 samples: 0 consistent, 1 drifting");
  });
});

describe("bad usage and input: exit 2, naming what and where", () => {
  it("usage", async () => {
    expect((await run([])).stderr).toContain("expected the command check");
    expect((await run(["check"])).code).toBe(2);
    expect((await run(["check", "a.json", "--frob"])).stderr).toContain("unknown option --frob");
    expect((await run(["check", "a.json", "--tokenizer"])).stderr).toContain("--tokenizer needs a value");
    expect((await run(["--help"])).code).toBe(0);
  });

  it("a file that cannot be read, a sample line with a bad field, a result sample with one", async () => {
    expect((await run(["check", join(dir, "missing.json")])).stderr).toMatch(/cannot read .*missing\.json/);
    const jsonl = join(dir, "bad.jsonl");
    await writeFile(jsonl, `${JSON.stringify({ idx: 0, task_name: "t", message_log: [] })}\n${JSON.stringify({ idx: 1, task_name: "t", message_log: [{ role: "user", content: 3 }] })}\n`);
    const a = await run(["check", jsonl]);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain(`${jsonl}: line 2: message_log[0].content: expected a string`);
    const json = join(dir, "bad.json");
    await writeFile(json, JSON.stringify({ samples: [{ idx: 0, task_name: "t", message_log: [{ role: "user", content: "x", token_ids: [-1] }] }] }, null, 2));
    const b = await run(["check", json]);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain(`${json}: samples[0].message_log[0].token_ids[0]: expected a token id`);
  });

  it("a tokenizer folder that is not there, or lacks a file", async () => {
    const result = join(dir, "small.json");
    await writeFile(result, JSON.stringify({ samples: [{ idx: 0, task_name: "t", message_log: [{ role: "user", content: "x", token_ids: [120] }] }] }));
    const a = await run(["check", result, "--tokenizer", join(dir, "nope")]);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain(`no such folder ${join(dir, "nope")} (from --tokenizer)`);
    const b = await run(["check", result, "--tokenizer", dir]);
    expect(b.stderr).toContain(`tokenizer.json is missing from ${dir}`);
    expect((await run(["check", result, "--tokenizer", "builtin:huge"])).stderr).toContain("unknown built-in tokenizer 'builtin:huge'");
  });
});
