/**
 * The user's environments of this checkout for the Node commands: every `.js` module in `environments/` (the
 * lab's page loads the same folder, `src/app/envs/checkout.ts`), or in the folder `LAB_ENVIRONMENTS_DIR` names,
 * each in a thread of its own (./module-threads.ts), as the page runs each in a Worker.
 * A module that fails to load is reported on stderr with its stack and left out; the others still run. So is one
 * named like a built-in environment, and two modules of one name are both left out (which one a scenario meant is
 * not known), each named with its path, as the page refuses them.
 */

import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { environmentLookup, findEnvironment, type EnvironmentDefinition, type EnvironmentLookup } from "../envs/index.js";
import { loadInThread } from "./module-threads.js";

export const CHECKOUT_ENVIRONMENTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../environments");

export async function loadCheckoutEnvironments(
  dir = CHECKOUT_ENVIRONMENTS_DIR,
  report: (message: string) => void = (m) => console.error(m),
): Promise<EnvironmentDefinition[]> {
  if (!existsSync(dir)) return [];
  const loaded: { definition: EnvironmentDefinition; path: string }[] = [];
  // Each in a thread of its own (./module-threads.ts), all started at once.
  const paths = readdirSync(dir).filter((f) => f.endsWith(".js")).sort().map((file) => join(dir, file));
  const threads = await Promise.all(paths.map((path) => loadInThread(path, report)));
  for (const [i, thread] of threads.entries()) {
    const path = paths[i]!;
    if (!thread.ok) {
      report(`warning: ${path} was not loaded: ${thread.stack || thread.message}`);
      continue;
    }
    const definition = thread.environment;
    if (findEnvironment(definition.name)) {
      report(`warning: ${path} was not loaded: its environment is named '${definition.name}', a built-in environment's name (give it another)`);
      continue;
    }
    loaded.push({ definition, path });
  }
  const byName = new Map<string, string[]>();
  for (const { definition, path } of loaded) byName.set(definition.name, [...(byName.get(definition.name) ?? []), path]);
  for (const [name, paths] of byName) {
    if (paths.length > 1) report(`warning: ${paths.join(" and ")} are all named '${name}': none of them was loaded (rename all but one)`);
  }
  return loaded.filter(({ definition }) => byName.get(definition.name)!.length === 1).map(({ definition }) => definition);
}

let checkout: Promise<EnvironmentLookup> | null = null;
let chosenDir: string | null = null;

/**
 * The folder whose modules the commands load (`--environments <dir>`), instead of `LAB_ENVIRONMENTS_DIR` or this
 * checkout's `environments/`. Set before the first lookup.
 */
export function chooseEnvironmentsDir(dir: string): void {
  if (!existsSync(dir)) throw new Error(`--environments ${dir}: no such folder`);
  if (!statSync(dir).isDirectory()) throw new Error(`--environments ${dir}: a file, not a folder (name the folder of environment modules)`);
  chosenDir = resolve(dir);
  checkout = null;
}

/** The folder chosen instead of this checkout's (`--environments`, else `LAB_ENVIRONMENTS_DIR`), or null. */
export function chosenEnvironmentsDir(): string | null {
  return chosenDir ?? (process.env.LAB_ENVIRONMENTS_DIR ? resolve(process.env.LAB_ENVIRONMENTS_DIR) : null);
}

/** The folder the environment modules come from. */
export function environmentsDir(): string {
  return chosenEnvironmentsDir() ?? CHECKOUT_ENVIRONMENTS_DIR;
}

/** The built-in environments and those of `environmentsDir()`, loaded once per process. */
export function checkoutEnvironmentLookup(): Promise<EnvironmentLookup> {
  checkout ??= loadCheckoutEnvironments(environmentsDir()).then((defs) => environmentLookup(defs));
  return checkout;
}
