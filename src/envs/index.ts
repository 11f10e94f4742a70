/** The built-in environments, by the name scenarios use. */

import { calculatorEnvironment } from "./calculator/index.js";
import { slidingPuzzleEnvironment } from "./sliding-puzzle/index.js";
import type { EnvironmentDefinition } from "./types.js";
import { workspaceEnvironment } from "./workspace/index.js";

export const BUILTIN_ENVIRONMENTS: readonly EnvironmentDefinition[] = [
  slidingPuzzleEnvironment,
  calculatorEnvironment,
  workspaceEnvironment,
];

export function findEnvironment(name: string): EnvironmentDefinition | undefined {
  return BUILTIN_ENVIRONMENTS.find((e) => e.name === name);
}

export type { DatasetDatum, EnvironmentDefinition, EnvView } from "./types.js";
