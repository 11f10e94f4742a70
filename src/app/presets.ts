/**
 * What the page offers out of the box: demo set-ups (they fill the form) and the example scenario files that the
 * README documents and the tests run (they fill the JSON editor).
 */

import calculatorOracle from "../scenario/examples/calculator-oracle.json";
import calculatorScripted from "../scenario/examples/calculator-scripted.json";
import mixedEnvs from "../scenario/examples/mixed-envs.json";
import puzzleAsync from "../scenario/examples/sliding-puzzle-oracle-async.json";
import puzzleSync from "../scenario/examples/sliding-puzzle-oracle-sync.json";
import workspace from "../scenario/examples/workspace-structured.json";
import { DEFAULT_SETUP, type Setup } from "./setup/setup.js";

export type Preset = { id: string; title: string } & ({ setup: Setup } | { scenario: unknown });

export const PRESETS: readonly Preset[] = [
  { id: "default", title: "Built-in trained model on the sliding puzzle (default)", setup: DEFAULT_SETUP },
  {
    id: "oracle-demo",
    title: "Oracle demo: the sliding puzzle solved",
    setup: { ...DEFAULT_SETUP, policy: "oracle", datasetSize: 4, datasetSeed: 7, maxRolloutTurns: 31, maxSeqLen: 4096, puzzle: { size: 3, shuffle_moves: 12, max_moves: 30 } },
  },
  {
    id: "tools-demo",
    title: "Structured-tools demo: the workspace",
    setup: {
      ...DEFAULT_SETUP,
      env: "workspace",
      policy: "oracle",
      errorRate: 0.2,
      // A seed whose draws make mistakes in these three samples (the demo is of mistakes: presets.test.ts checks it).
      oracleSeed: 9,
      datasetSize: 3,
      datasetSeed: 5,
      mode: "async",
      maxSeqLen: 8192,
      maxRolloutTurns: 8,
      structured: true,
      invalidAction: true,
    },
  },
  {
    id: "trained-workspace",
    title: "Trained built-in model: the workspace with tools",
    // The workspace as builtin:trained was trained on it (src/training/plan.ts): Hermes tool calls with paired think
    // blocks, the fork envelope, the invalid-action and malformed-thinking penalties; greedy, so every run is the same.
    setup: {
      ...DEFAULT_SETUP,
      env: "workspace",
      datasetSize: 3,
      datasetSeed: 1_000_000,
      greedy: true,
      maxSeqLen: 8192,
      maxRolloutTurns: 8,
      maxNewTokens: 384,
      structured: true,
      thinkingStyle: "paired",
      envelope: "fork",
      invalidAction: true,
    },
  },
  { id: "puzzle-sync", title: "Sliding puzzle · oracle · sync", scenario: puzzleSync },
  { id: "puzzle-async", title: "Sliding puzzle · oracle · async", scenario: puzzleAsync },
  { id: "calculator-oracle", title: "Calculator · oracle · async", scenario: calculatorOracle },
  { id: "calculator-scripted", title: "Calculator · scripted · sync", scenario: calculatorScripted },
  {
    id: "workspace",
    title: "Workspace · structured tools · oracle with mistakes",
    // The example file's seed (kept by the regression suite's goldens) happens to draw no mistake in its three samples.
    scenario: { ...workspace, policy: { ...workspace.policy, seed: 9 } },
  },
  { id: "mixed", title: "Two environments in one batch · scripted · sync", scenario: mixedEnvs },
];
