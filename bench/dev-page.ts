/**
 * A benchmark page of `bench/` run in headless Chromium: Vite's dev server over the checkout (the page imports the
 * sources), one Chromium (`--enable-unsafe-webgpu` for WebGPU), and the page's `window.benchResult` (or
 * `benchError`) once it has one.
 */

import { spawn } from "node:child_process";
import { join } from "node:path";
import { chromium } from "@playwright/test";
import { root } from "./fixture.js";
import { waitForServer } from "./preview-server.js";

export interface DevPageOptions {
  /** The page's path and query, e.g. `/bench/policy.html?model=small`. */
  path: string;
  port: number;
  device: "wasm" | "webgpu";
  timeoutMs: number;
  /** The page's `console.log` lines are printed here (progress of a long benchmark). */
  echoLog?: boolean;
}

export async function runDevPage<T>(options: DevPageOptions): Promise<T> {
  // Vite itself, not through npx: killing npx would leave the server running.
  const server = spawn(process.execPath, [join(root, "node_modules/vite/bin/vite.js"), "--port", String(options.port), "--strictPort", "--host", "127.0.0.1"], {
    cwd: root,
    stdio: "ignore",
  });
  try {
    const url = `http://127.0.0.1:${options.port}${options.path}`;
    await waitForServer(url);
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run", ...(options.device === "webgpu" ? ["--enable-unsafe-webgpu"] : [])],
    });
    try {
      const page = await browser.newPage();
      if (options.echoLog) page.on("console", (message) => message.type() === "log" && console.log(message.text()));
      await page.goto(url);
      await page.waitForFunction(() => "benchResult" in window || "benchError" in window, null, { timeout: options.timeoutMs, polling: 1000 });
      const { result, error } = await page.evaluate(() => {
        const w = window as unknown as { benchResult?: unknown; benchError?: string };
        return { result: w.benchResult, error: w.benchError };
      });
      if (error) throw new Error(`the benchmark page failed: ${error}`);
      return result as T;
    } finally {
      await browser.close();
    }
  } finally {
    server.kill();
  }
}
