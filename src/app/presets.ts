/** The scenarios the page offers out of the box (the same files the README documents and the tests run). */

import calculatorOracle from "../scenario/examples/calculator-oracle.json";
import calculatorScripted from "../scenario/examples/calculator-scripted.json";
import mixedEnvs from "../scenario/examples/mixed-envs.json";
import puzzleModel from "../scenario/examples/sliding-puzzle-model.json";
import puzzleAsync from "../scenario/examples/sliding-puzzle-oracle-async.json";
import puzzleSync from "../scenario/examples/sliding-puzzle-oracle-sync.json";
import workspace from "../scenario/examples/workspace-structured.json";

export interface Preset {
  id: string;
  title: string;
  scenario: unknown;
}

export const PRESETS: readonly Preset[] = [
  { id: "puzzle-model", title: "Sliding puzzle · built-in tiny model · sync", scenario: puzzleModel },
  { id: "puzzle-sync", title: "Sliding puzzle · oracle · sync", scenario: puzzleSync },
  { id: "puzzle-async", title: "Sliding puzzle · oracle · async", scenario: puzzleAsync },
  { id: "calculator-oracle", title: "Calculator · oracle · async", scenario: calculatorOracle },
  { id: "calculator-scripted", title: "Calculator · scripted · sync", scenario: calculatorScripted },
  { id: "workspace", title: "Workspace · structured tools · oracle with mistakes", scenario: workspace },
  { id: "mixed", title: "Two environments in one batch · scripted · sync", scenario: mixedEnvs },
];
