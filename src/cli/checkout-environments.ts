/**
 * The user's environments of this checkout for the Node commands: every `.js` module in `environments/` (the
 * lab's page loads the same folder, `src/app/envs/checkout.ts`), or in the folder `LAB_ENVIRONMENTS_DIR` names.
 * A module that fails to load is reported on stderr with its stack and left out; the others still run.
 */

import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { environmentLookup, type EnvironmentDefinition, type EnvironmentLookup } from "../envs/index.js";
import { environmentFromModule } from "../envs/user/module.js";

export const CHECKOUT_ENVIRONMENTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../environments");

export async function loadCheckoutEnvironments(
  dir = CHECKOUT_ENVIRONMENTS_DIR,
  report: (message: string) => void = (m) => console.error(m),
): Promise<EnvironmentDefinition[]> {
  if (!existsSync(dir)) return [];
  const definitions: EnvironmentDefinition[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".js")).sort()) {
    const path = join(dir, file);
    try {
      definitions.push(environmentFromModule(await import(pathToFileURL(path).href), path));
    } catch (e) {
      report(`warning: ${path} was not loaded: ${(e as Error).stack ?? e}`);
    }
  }
  return definitions;
}

let checkout: Promise<EnvironmentLookup> | null = null;
let chosenDir: string | null = null;

/**
 * The folder whose modules the commands load (`--environments <dir>`), instead of `LAB_ENVIRONMENTS_DIR` or this
 * checkout's `environments/`. Set before the first lookup.
 */
export function chooseEnvironmentsDir(dir: string): void {
  if (!existsSync(dir)) throw new Error(`--environments ${dir}: no such folder`);
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
