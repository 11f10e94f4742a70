/** The built app served for the page benchmarks (vite preview on loopback), and the wait until it answers. */

import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { root } from "./fixture.js";

/** Vite itself, not through npx: killing npx would leave the server running. */
export function startPreview(dist: string, port: number): ChildProcess {
  return spawn(process.execPath, [join(root, "node_modules/vite/bin/vite.js"), "preview", "--outDir", dist, "--port", String(port), "--strictPort", "--host", "127.0.0.1"], {
    cwd: root,
    stdio: "ignore",
  });
}

/** Resolves once `url` answers (up to a minute); throws after that. */
export async function waitForServer(url: string): Promise<void> {
  for (let i = 0; i < 120; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`vite preview did not come up at ${url}`);
}
