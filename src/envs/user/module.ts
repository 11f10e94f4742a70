/**
 * A user's environment module: an ES module whose default export is an `EnvironmentDefinition` (name, title,
 * description, defaultTaskName, create, generateDataset, optional view). `environmentFromModule` checks the shape
 * and names the first thing that is wrong, so a broken module fails at load with a message, not mid-rollout.
 */

import { LabError } from "../../core/index.js";
import type { EnvironmentDefinition } from "../types.js";

/** Names scenarios can use: lower snake case, like the built-in ones. */
const NAME = /^[a-z][a-z0-9_]*$/;

export class EnvironmentModuleError extends LabError {
  override name = "EnvironmentModuleError";
  override readonly code = "invalid_module";
}

/** The environment a module default-exports; `origin` (a file name or URL) names the module in errors. */
export function environmentFromModule(exports: unknown, origin: string): EnvironmentDefinition {
  const fail = (what: string) => new EnvironmentModuleError(`environment module ${origin}: ${what}`);
  const value = (exports as { default?: unknown } | null)?.default;
  if (!value || typeof value !== "object") {
    throw fail(`the default export must be an environment object, got ${value === null ? "null" : typeof value}`);
  }
  const env = value as Record<string, unknown>;
  if (typeof env.name !== "string" || !NAME.test(env.name)) {
    throw fail(`'name' must be a lower_snake_case string (the name scenarios use), got ${JSON.stringify(env.name)}`);
  }
  for (const key of ["create", "generateDataset"]) {
    if (typeof env[key] !== "function") throw fail(`'${key}' must be a function, got ${typeof env[key]}`);
  }
  if (env.view !== undefined && typeof env.view !== "function") throw fail(`'view' must be a function when given, got ${typeof env.view}`);
  for (const key of ["title", "description", "defaultTaskName"]) {
    if (env[key] !== undefined && typeof env[key] !== "string") throw fail(`'${key}' must be a string, got ${typeof env[key]}`);
  }
  const create = env.create as EnvironmentDefinition["create"];
  const generateDataset = env.generateDataset as EnvironmentDefinition["generateDataset"];
  const view = env.view as EnvironmentDefinition["view"];
  return {
    name: env.name,
    title: (env.title as string | undefined) ?? env.name,
    description: (env.description as string | undefined) ?? "",
    defaultTaskName: (env.defaultTaskName as string | undefined) ?? env.name,
    // Called as methods of the module's object, so `this` works inside them as the author expects.
    create: async (config) => {
      const instance = await create.call(env, config);
      if (!instance || typeof (instance as { step?: unknown }).step !== "function") {
        throw fail("create(config) must return an object with a step(messageLogBatch, metadata) method");
      }
      return instance;
    },
    generateDataset: (request) => generateDataset.call(env, request),
    ...(view ? { view: (metadata) => view.call(env, metadata) } : {}),
  };
}
