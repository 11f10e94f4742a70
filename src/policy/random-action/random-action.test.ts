import { describe, expect, it } from "vitest";
import { byteLevelTokenizer, isInvalidActionType } from "../../core/index.js";
import { environmentLookup } from "../../envs/index.js";
import { calculate, parseCalculatorCall, parseFinalAnswer } from "../../envs/calculator/env.js";
import { parsePuzzleAction } from "../../envs/sliding-puzzle/env.js";
import { parseStructuredAction } from "../../envs/workspace/tools.js";
import { loadCheckoutEnvironments } from "../../cli/checkout-environments.js";
import { runScenario } from "../../scenario/run.js";
import type { RolloutResultJson } from "../../scenario/result.js";
import { parseScenario } from "../../scenario/schema.js";
import { ENVIRONMENT_PLANS, planScenario, splitSeeds } from "../../training/plan.js";
import { makeRandomActionSolvers, randomActionPolicy } from "./index.js";
import { calculatorNumbers } from "./calculator.js";
import { outputLines, workspacePaths } from "./workspace.js";

const environments = environmentLookup(await loadCheckoutEnvironments());

async function run(planName: string, seed: number, samples = 6, datasetSeed = splitSeeds("held_out", 1)[0]!): Promise<RolloutResultJson> {
  const plan = ENVIRONMENT_PLANS.find((p) => p.name === planName)!;
  const scenario = parseScenario(planScenario(plan, datasetSeed, samples, { seed: 0, errorRate: 0 }));
  return runScenario(scenario, { environments, policyOverride: { generation: randomActionPolicy(byteLevelTokenizer, { seed }), tokenizer: byteLevelTokenizer } });
}

const assistantTexts = (r: RolloutResultJson) => r.samples.map((s) => s.message_log.filter((m) => m.role === "assistant").map((m) => m.content));

/** Whether the environment's own parser reads `text` as an action it accepts (per plan's environment). */
const ACCEPTS: Record<string, (text: string, prompt: string) => boolean> = {
  sliding_puzzle: (text) => ["up", "down", "left", "right"].includes(parsePuzzleAction(text) ?? ""),
  calculator: (text) => {
    if (parseFinalAnswer(text) !== null) return true;
    const call = parseCalculatorCall(text);
    return call !== null && calculate(call) !== null;
  },
  workspace: (text) => !parseStructuredAction(text).invalid,
  number_guess: (text, prompt) => {
    const n = Number(/from 1 to (\d+)/.exec(prompt)![1]);
    const k = Number(/^<guess>(\d+)<\/guess>$/.exec(text)?.[1]);
    return k >= 1 && k <= n;
  },
};

/** Observations that say the turn was no action (the environments' wording). */
const REJECTED = /Invalid response format|Unknown command|Invalid input format|<error>Invalid response|Calculation failed|Answer with <guess>N<\/guess>|No runnable tool call found/;

describe("the random-action policy", () => {
  it("writes only actions each environment reads as well-formed", async () => {
    for (const plan of ENVIRONMENT_PLANS) {
      for (const seed of [0, 1]) {
        const result = await run(plan.name, seed);
        let turns = 0;
        for (const sample of result.samples) {
          expect(sample.error, plan.name).toBeUndefined();
          const prompt = sample.message_log[0]!.content;
          sample.message_log.forEach((m, i) => {
            if (m.role !== "assistant") return;
            turns++;
            expect(ACCEPTS[plan.env]!(m.content, prompt), `${plan.name}: ${JSON.stringify(m.content)}`).toBe(true);
            expect((m.invalid_action_violations ?? []).filter((v) => isInvalidActionType(v.type)), plan.name).toEqual([]);
            const answer = sample.message_log[i + 1];
            if (answer) expect(answer.content, plan.name).not.toMatch(REJECTED);
          });
          if (sample.invalid_action_count !== undefined) expect(sample.invalid_action_count).toBe(0);
        }
        expect(turns, plan.name).toBeGreaterThanOrEqual(result.samples.length);
      }
    }
  });

  it("is deterministic for a seed and differs across seeds", async () => {
    for (const plan of ENVIRONMENT_PLANS) {
      const a = assistantTexts(await run(plan.name, 7));
      expect(assistantTexts(await run(plan.name, 7)), plan.name).toEqual(a);
      expect(assistantTexts(await run(plan.name, 8)), plan.name).not.toEqual(a);
    }
  });

  it("draws every kind of action over enough turns", async () => {
    const seen = (planName: string, samples: number) => run(planName, 3, samples).then((r) => assistantTexts(r).flat());
    const puzzle = await seen("sliding_puzzle", 8);
    for (const d of ["up", "down", "left", "right"]) expect(puzzle).toContain(`Let me think.\n<action>${d}</action>`);
    const calculator = await seen("calculator", 12);
    expect(calculator.some((t) => t.endsWith("<call: calculator>"))).toBe(true);
    expect(calculator.some((t) => !t.includes("<call"))).toBe(true);
    const workspace = (await seen("workspace", 12)).join("\n");
    for (const tool of ["run_shell", "read_file", "write_file", "task_complete"]) expect(workspace).toContain(`"name": "${tool}"`);
  });

  it("reads its arguments from the context", () => {
    const calc = "<|im_start|>user\nExample: [5, 3, sum]<call: calculator>\nSolve: (4 - 7) * 12<|im_end|>\n<|im_start|>assistant\n[4, 7, diff]<call: calculator><result>-3.00000</result>";
    expect(calculatorNumbers(calc)).toEqual(["4", "7", "12", "-3.00000"]);
    const ws = "Task: Count the lines of /workspace/logs/a.log and write it to /workspace/answer.txt.<|im_end|>\n<tool_response>\n[exit=0]\n9\n/workspace/src/x.py\n</tool_response>";
    expect(workspacePaths(ws)).toEqual(["/workspace", "/workspace/logs/a.log", "/workspace/answer.txt", "/workspace/src/x.py"]);
    expect(outputLines(ws)).toEqual(["9", "/workspace/src/x.py"]);
    expect(makeRandomActionSolvers().map((s) => s.env)).toEqual(["sliding_puzzle", "calculator", "workspace", "number_guess"]);
  });
});
