/** The environments scenarios can name: the built-in ones, and those a user adds (modules, remote servers). */

import { calculatorEnvironment } from "./calculator/index.js";
import { httpEnvironment } from "./http/index.js";
import { slidingPuzzleEnvironment } from "./sliding-puzzle/index.js";
import type { EnvironmentDefinition } from "./types.js";
import { workspaceEnvironment } from "./workspace/index.js";

export const BUILTIN_ENVIRONMENTS: readonly EnvironmentDefinition[] = [
  slidingPuzzleEnvironment,
  calculatorEnvironment,
  workspaceEnvironment,
  httpEnvironment,
];

/**
 * Finds an environment by the name scenarios use (`envs.<task>.env`); `names`, where the lookup knows them, lists
 * every name it finds (for errors that say what a scenario may name).
 */
export type EnvironmentLookup = ((name: string) => EnvironmentDefinition | undefined) & { names?: () => string[] };

export function findEnvironment(name: string): EnvironmentDefinition | undefined {
  return BUILTIN_ENVIRONMENTS.find((e) => e.name === name);
}

/** The built-in environments and the user's; a user environment may not take a built-in one's name. */
export function environmentLookup(userEnvironments: Iterable<EnvironmentDefinition>): EnvironmentLookup {
  const byName = new Map<string, EnvironmentDefinition>();
  for (const env of userEnvironments) {
    if (findEnvironment(env.name)) throw new Error(`environment '${env.name}' is built in: give yours another name`);
    byName.set(env.name, env);
  }
  const lookup = (name: string) => findEnvironment(name) ?? byName.get(name);
  return Object.assign(lookup, { names: () => [...BUILTIN_ENVIRONMENTS.map((e) => e.name), ...byName.keys()] });
}

export { environmentFromModule, EnvironmentModuleError } from "./user/module.js";
export type { BuiltinEnvironmentDefinition, DatasetDatum, EnvironmentDefinition, EnvView, GeneratedDatum, RawPromptDatum } from "./types.js";
