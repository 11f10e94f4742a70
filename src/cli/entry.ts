/** Whether a module is the process's entry point (run as `tsx src/cli/x.ts`), not imported by the dispatcher. */

import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

export function isEntryPoint(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(resolve(script)) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
