/**
 * The built lab the browser backends of `rollout-lab regress` serve (`dist/`), built on first use where it is
 * missing (an installed package ships sources, not a build): the built-in models and the ORT files into
 * `public/`, then `vite build`. The build goes to a folder of its own and is renamed into place, so two commands
 * starting at once never serve a half-written site.
 */

import { existsSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildModelAssets } from "./build-model.js";

export async function ensureBuiltApp(root: string, log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<void> {
  const dist = join(root, "dist");
  if (existsSync(join(dist, "index.html"))) return;
  log(`building the lab into ${dist} (first use of a browser backend; about half a minute)…`);
  const started = performance.now();
  buildModelAssets();
  const staging = join(root, `dist.building-${process.pid}`);
  const { build } = await import("vite");
  await build({ root, configFile: join(root, "vite.config.ts"), logLevel: "warn", build: { outDir: staging, emptyOutDir: true } });
  try {
    renameSync(staging, dist);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(join(dist, "index.html"))) throw e;
  }
  log(`built the lab in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
