/**
 * builtin:trained as committed (issue 21): the weights file is the trained preset's architecture and says how it
 * was trained; `build:model` builds its folder from it; and the model acts. On a fixed held-out puzzle (dataset
 * seed 1,000,002: the training data never used a seed that high) greedy decoding in Node, loaded as `npm run rollout`
 * loads it, writes only well-formed moves (each after a think block with the board) and solves it. The page's twin is e2e/trained-model.spec.ts.
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nodeRunOptions } from "../../cli/node-run.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import { TRAINED_PRESET } from "./presets.js";
import { parseWeightsFile } from "./weights-file.js";
import { TRAINED_WEIGHTS_FILE, writeBuiltinFolder } from "./write-folder.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const HELD_OUT_PUZZLE = join(ROOT, "regress", "scenarios", "puzzle-trained-model-greedy.json");
/**
 * A move as the model was taught to write it: the board as it stands and the empty cell thought aloud, then the action.
 * What follows the action is not checked: the environment reads the first action, and a reply may end with a stray
 * token after it (`</action></`: one of this puzzle's 24 greedy turns).
 */
const ACTION = /^<think>\nBoard: [\d_ /]+\.\nEmpty: row \d, column \d\.\n<\/think>\n<action>(up|down|left|right)<\/action>/;

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

describe("builtin:trained, the committed weights", () => {
  it("are the trained preset's architecture, and name their training", () => {
    const file = parseWeightsFile(new Uint8Array(readFileSync(TRAINED_WEIGHTS_FILE)));
    expect(file.architecture.hiddenSize).toBe(TRAINED_PRESET.hiddenSize);
    expect(file.architecture.numLayers).toBe(TRAINED_PRESET.numLayers);
    const training = JSON.parse(file.metadata.training ?? "null") as { steps?: number; data?: { held_out_dataset_seeds?: string } } | null;
    expect(training?.steps).toBeGreaterThan(100);
    expect(training?.data?.held_out_dataset_seeds).toMatch(/^1000000/);
  });

  it("build builtin/trained once; a second build finds it up to date", () => {
    const root = mkdtempSync(join(tmpdir(), "trained-builtin-"));
    roots.push(root);
    expect(writeBuiltinFolder(root, "trained").written).toBe(true);
    expect(writeBuiltinFolder(root, "trained").written).toBe(false);
    expect(readFileSync(join(root, "builtin", "trained", "README.md"), "utf8")).toContain("src/policy/builtin-model/weights/trained.safetensors");
  });

  it("solve a fixed held-out puzzle in Node, greedy, with well-formed actions only", { timeout: 120_000 }, async () => {
    const scenario = parseScenario(JSON.parse(readFileSync(HELD_OUT_PUZZLE, "utf8")));
    const result = await runScenario(scenario, await nodeRunOptions(HELD_OUT_PUZZLE));
    const replies = result.samples.flatMap((s) => s.message_log.filter((m) => m.role === "assistant").map((m) => m.content));
    expect(replies.length).toBeGreaterThan(0);
    for (const reply of replies) expect(reply).toMatch(ACTION);
    const solved = result.samples.filter((s) => s.total_reward > 0);
    expect(solved.length).toBeGreaterThan(0);
    for (const s of solved) expect(s.message_log.at(-1)!.content).toContain("Congratulations! You've solved the puzzle!");
  });
});
