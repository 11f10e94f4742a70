/**
 * The built lab the browser backends of `rollout-lab regress` serve (`dist/`), built where it is missing (an
 * installed package ships sources, not a build) or older than what it is built from (`APP_SOURCES`: a run after
 * `npm run train:model -- --install`, or after editing the app, must not compare a stale page): the built-in models
 * and the ORT files into `public/`, then `vite build`. The build goes to a folder of its own and is renamed into
 * place, so two commands starting at once never serve a half-written site.
 */

import { existsSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { buildModelAssets } from "./build-model.js";

/** What `dist/` is built from, relative to the project: a change to any of them (tests aside) makes it stale. */
export const APP_SOURCES = ["src", "public", "index.html", "vite.config.ts", "package.json", "package-lock.json"] as const;

const isTest = (name: string) => /\.test\.tsx?$/.test(name);

/** The newest modification time (ms) among the app's sources under `root`, test files left out; 0 when there are none. */
export function newestSourceChange(root: string): number {
  let newest = 0;
  const visit = (path: string) => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path)) if (!isTest(entry)) visit(join(path, entry));
    } else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const source of APP_SOURCES) visit(join(root, source));
  return newest;
}

/** Why `dist/` must be built: missing, or older than a source; null when it is current. */
export function builtAppState(root: string): "missing" | "stale" | null {
  const index = statSync(join(root, "dist", "index.html"), { throwIfNoEntry: false });
  if (!index) return "missing";
  return newestSourceChange(root) > index.mtimeMs ? "stale" : null;
}

export async function ensureBuiltApp(root: string, log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<void> {
  const dist = join(root, "dist");
  // The model folders first: a new weights file rewrites its folder under public/, which then makes dist/ stale.
  buildModelAssets(undefined, (line, upToDate) => {
    if (!upToDate) log(line);
  });
  const state = builtAppState(root);
  if (state === null) return;
  log(`building the lab into ${dist} (${state === "missing" ? "first use of a browser backend" : "older than its sources"}; about half a minute)…`);
  const started = performance.now();
  const staging = join(root, `dist.building-${process.pid}`);
  const { build } = await import("vite");
  // Always the production build: vite follows NODE_ENV, which a caller may have set (vitest sets "test"), and with it
  // the page got React's development bundle, which never ran a scenario in the headless browser.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    await build({ root, configFile: join(root, "vite.config.ts"), logLevel: "warn", mode: "production", build: { outDir: staging, emptyOutDir: true } });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
  // A stale build is moved aside, not deleted first, so dist/ is never a half-removed folder.
  const previous = join(root, `dist.previous-${process.pid}`);
  if (state === "stale") {
    try {
      renameSync(dist, previous);
    } catch {
      // Another command moved or replaced it first.
    }
  }
  try {
    renameSync(staging, dist);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(join(dist, "index.html"))) throw e;
  }
  rmSync(previous, { recursive: true, force: true });
  log(`built the lab in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
