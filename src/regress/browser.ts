/**
 * The browser backends of `npm run regress` (`--backend wasm|webgpu`): the built app (dist/, served by
 * `vite preview`) in headless Chromium, driven through Playwright. Each scenario is opened as a reproducing link
 * (`/#scenario=…&run=1`) in a fresh page, with the model policy's device forced to the backend; the page's result
 * JSON is read back once the run status says finished. One preview server and one browser for the whole suite.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import type { Browser } from "@playwright/test";
import { shareHash } from "../app/share-url.js";
import type { Scenario } from "../scenario/schema.js";

export type BrowserBackend = "wasm" | "webgpu";

/** The largest allowed |Δ| of a generation logprob against Node's goldens (WebGPU float math differs more). */
export const LOGPROB_TOLERANCE: Record<BrowserBackend, number> = { wasm: 1e-4, webgpu: 1e-3 };

/** How long one scenario may take in the page (the software WebGPU adapter is slow: the tiny-model scenario of the sample suite takes about 90 s on SwiftShader with 2 cores). */
const RUN_TIMEOUT_MS: Record<BrowserBackend, number> = { wasm: 60_000, webgpu: 300_000 };

const CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"];

export class BrowserSetupError extends Error {}

/** Why the browser cannot run this scenario (reported as skipped), or null when it can. */
export function browserSkipReason(scenario: Scenario): string | null {
  const policy = scenario.policy;
  if (policy.kind === "model" && /^(\.{1,2}\/|\/)/.test(policy.model)) {
    return `model policy with a local folder (${policy.model}): the page loads built-in or hub models only`;
  }
  return null;
}

/** The scenario as the page runs it: a model policy's device forced to the backend. */
export function forBackend(scenario: Scenario, backend: BrowserBackend): Scenario {
  return scenario.policy.kind === "model" ? { ...scenario, policy: { ...scenario.policy, device: backend } } : scenario;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

async function waitForServer(url: string, child: ChildProcess, output: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new BrowserSetupError(`vite preview exited with ${child.exitCode}:\n${output()}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new BrowserSetupError(`vite preview did not answer at ${url} within ${timeoutMs / 1000} s:\n${output()}`);
}

export interface BrowserRunner {
  /**
   * Runs one scenario in a fresh page; the result JSON (`{samples, metrics}`) or an Error with the page's reason.
   * `replayRun` is the text of the run a replay policy's `file` names.
   */
  run(scenario: Scenario, replayRun?: string): Promise<{ samples: unknown[]; metrics: Record<string, unknown> }>;
  close(): Promise<void>;
}

/**
 * Starts `vite preview` on a free port over `<root>/dist` and one headless Chromium. Throws BrowserSetupError
 * when dist/index.html is missing (nothing is built here) or the server or browser cannot start.
 */
export async function startBrowserRunner(root: string, backend: BrowserBackend): Promise<BrowserRunner> {
  if (!existsSync(join(root, "dist", "index.html"))) {
    throw new BrowserSetupError(`no built app at ${join(root, "dist", "index.html")}: run npm run build first`);
  }
  const executablePath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
  if (!existsSync(executablePath)) throw new BrowserSetupError(`no Chromium at ${executablePath} (set CHROMIUM_PATH)`);
  const port = await freePort();
  const vite = join(root, "node_modules", "vite", "bin", "vite.js");
  const server = spawn(process.execPath, [vite, "preview", "--port", String(port), "--strictPort", "--host", "127.0.0.1"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  server.stdout?.on("data", (d: Buffer) => (log += d.toString()));
  server.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  const stopServer = () => {
    if (server.exitCode === null && server.signalCode === null) server.kill("SIGTERM");
  };
  const base = `http://127.0.0.1:${port}`;
  let browser: Browser;
  try {
    await waitForServer(`${base}/`, server, () => log);
    const args = backend === "webgpu" ? [...CHROMIUM_ARGS, "--enable-unsafe-webgpu"] : CHROMIUM_ARGS;
    const { chromium } = await import("@playwright/test");
    browser = await chromium.launch({ executablePath, args, headless: true });
  } catch (e) {
    stopServer();
    throw e instanceof BrowserSetupError ? e : new BrowserSetupError(`cannot start the browser: ${(e as Error).message}`);
  }
  const timeout = RUN_TIMEOUT_MS[backend];

  return {
    async run(scenario, replayRun) {
      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      try {
        const status = page.getByTestId("run-status");
        if (scenario.policy.kind === "replay") {
          // A link cannot carry a file: the runner does what a person would, picking the run to replay in the
          // set-up form, then putting the scenario (naming that file) in the JSON editor and pressing Run.
          if (replayRun === undefined) throw new Error(`no run given for the replay policy's file '${scenario.policy.file}'`);
          const name = scenario.policy.file.split(/[\\/]/).pop()!;
          await page.goto(`${base}/`);
          await page.getByLabel("Policy", { exact: true }).selectOption("replay");
          await page.getByLabel("Run to replay").setInputFiles({ name, mimeType: "application/json", buffer: Buffer.from(replayRun) });
          const editor = page.getByLabel("Scenario", { exact: true });
          if (!(await editor.isVisible())) await page.getByText("Scenario JSON (what runs)").click();
          const replay = { ...scenario, policy: { ...scenario.policy, file: name } };
          await editor.fill(JSON.stringify(replay));
          await page.getByRole("button", { name: "Run", exact: true }).click();
        } else {
          await page.goto(`${base}/${shareHash(forBackend(scenario, backend), true)}`);
        }
        try {
          await page.waitForFunction(
            () => {
              const text = document.querySelector('[data-testid="run-status"]')?.textContent;
              return text === "finished" || text === "failed";
            },
            undefined,
            { timeout },
          );
        } catch {
          const now = (await status.textContent().catch(() => null)) ?? "?";
          throw new Error(`not finished after ${timeout / 1000} s (status: ${now})${pageErrors.length ? `; page errors: ${pageErrors.join("; ")}` : ""}`);
        }
        if ((await status.textContent()) === "failed") {
          const error = await page.getByTestId("run-error").textContent().catch(() => null);
          throw new Error(`the run failed in the page: ${error?.trim() || "(no error shown)"}`);
        }
        const text = await page.getByTestId("result-json").textContent();
        const result = JSON.parse(text ?? "null") as { samples?: unknown; metrics?: unknown } | null;
        if (!result || !Array.isArray(result.samples) || typeof result.metrics !== "object" || result.metrics === null) {
          throw new Error("the page finished but shows no result JSON");
        }
        return { samples: result.samples, metrics: result.metrics as Record<string, unknown> };
      } finally {
        await page.close();
      }
    },
    async close() {
      await browser.close().catch(() => undefined);
      stopServer();
    },
  };
}
