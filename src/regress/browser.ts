/**
 * The browser backends of `npm run regress` (`--backend wasm|webgpu`): the built app (dist/, served by
 * `vite preview`) in headless Chromium, driven through Playwright. Each scenario is opened as a reproducing link
 * (`/#scenario=…&run=1`) in a fresh page, with the model policy's device forced to the backend; the page's result
 * JSON is read back once the run status says finished. One preview server and one browser for the whole suite;
 * each scenario runs in a fresh browser context, traced (Playwright's trace viewer opens the file), so a failing
 * scenario's page can be inspected afterwards. The environment modules of `--environments <dir>` are loaded into
 * each page through its "Environment module file" picker, as a person would load them; a scenario then runs from
 * the JSON editor (a link cannot carry modules or files).
 */

import { LabError } from "../core/index.js";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import type { PreviewServer } from "vite";
import { shareHash } from "../scenario/share-url.js";
import type { Scenario } from "../scenario/schema.js";

export type BrowserBackend = "wasm" | "webgpu";

/** How long one scenario may take in the page (the software WebGPU adapter is slow: the tiny-model scenario of the sample suite takes about 90 s on SwiftShader with 2 cores). */
const RUN_TIMEOUT_MS: Record<BrowserBackend, number> = { wasm: 180_000, webgpu: 600_000 };

const CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"];

export class BrowserSetupError extends LabError {
  override name = "BrowserSetupError";
  override readonly code = "browser_setup";
}

/** Why the browser cannot run this scenario (reported as skipped), or null when it can. */
export function browserSkipReason(scenario: Scenario): string | null {
  const policy = scenario.policy;
  if (policy.kind === "model" && /^(\.{1,2}\/|\/)/.test(policy.model)) {
    return `model policy with a local folder (${policy.model}): the page loads built-in or hub models only`;
  }
  return null;
}

/** Whether running the scenario contacts a host other than the page's own: a remote environment, a hub model, an inference server. */
export function contactsOtherHosts(scenario: Scenario): boolean {
  const remote = Object.values(scenario.envs).some((e) => e.env === "http");
  const hub = scenario.policy.kind === "model" && !/^(builtin:|local:)/.test(scenario.policy.model);
  return remote || hub || scenario.policy.kind === "server";
}

/** The scenario as the page runs it: a model policy's device forced to the backend. */
export function forBackend(scenario: Scenario, backend: BrowserBackend): Scenario {
  return scenario.policy.kind === "model" ? { ...scenario, policy: { ...scenario.policy, device: backend } } : scenario;
}

export interface RunInPageOptions {
  /** The text of the run a replay policy's `file` names. */
  replayRun?: string | undefined;
  /** Where to write the Playwright trace of the page (null: no trace). */
  tracePath?: string | null;
}

export interface BrowserRunner {
  /** Runs one scenario in a fresh page; the result JSON (`{samples, metrics}`) or an Error with the page's reason. */
  run(scenario: Scenario, options?: RunInPageOptions): Promise<{ samples: unknown[]; metrics: Record<string, unknown> }>;
  close(): Promise<void>;
}

export interface BrowserRunnerOptions {
  /** A folder of environment modules to load into every page (those the build bundled are there already). */
  environmentsDir?: string | null;
}

interface ModuleFile {
  name: string;
  text: string;
}

/** The `.js` modules of a folder, in name order. */
function moduleFiles(dir: string | null | undefined): ModuleFile[] {
  if (!dir || !existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".js"))
    .sort()
    .map((name) => ({ name, text: readFileSync(join(dir, name), "utf8") }));
}

/** Loads each module through the page's picker and waits until it is ready (or names why it failed). */
async function loadModules(page: Page, modules: readonly ModuleFile[]): Promise<void> {
  const picker = page.getByLabel("Environment module file");
  for (const m of modules) {
    await picker.setInputFiles({ name: m.name, mimeType: "text/javascript", buffer: Buffer.from(m.text) });
    const entry = page.getByTestId("user-environment").filter({ hasText: m.name }).last();
    await entry.and(page.locator('[data-status="ready"], [data-status="failed"]')).waitFor({ timeout: 30_000 });
    if ((await entry.getAttribute("data-status")) === "failed") {
      const error = await entry.getByTestId("env-module-error").textContent().catch(() => null);
      const clash = error?.includes("is already loaded from environments/") ? " (the built lab bundles a module of that name: give yours another name)" : "";
      throw new Error(`environment module ${m.name} failed to load in the page: ${error?.trim() || "(no error shown)"}${clash}`);
    }
  }
}

/**
 * Starts `vite preview` on a free port over `<root>/dist` and one headless Chromium. Throws BrowserSetupError
 * when dist/index.html is missing (nothing is built here) or the server or browser cannot start.
 */
export async function startBrowserRunner(root: string, backend: BrowserBackend, options: BrowserRunnerOptions = {}): Promise<BrowserRunner> {
  // A module the build bundled (the same file of the project's environments/) is in the page already.
  const bundled = new Map(moduleFiles(join(root, "environments")).map((m) => [m.name, m.text]));
  const modules = moduleFiles(options.environmentsDir).filter((m) => bundled.get(m.name) !== m.text);
  if (!existsSync(join(root, "dist", "index.html"))) {
    throw new BrowserSetupError(`no built app at ${join(root, "dist", "index.html")}: run npm run build first`);
  }
  const executablePath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
  if (!existsSync(executablePath)) throw new BrowserSetupError(`no Chromium at ${executablePath} (set CHROMIUM_PATH)`);
  // Vite's own preview server (the headers of vite.config.ts: CSP and cross-origin isolation), in this process,
  // on a free port of the loopback interface.
  let server: PreviewServer;
  try {
    const { preview } = await import("vite");
    server = await preview({ root, configFile: join(root, "vite.config.ts"), logLevel: "warn", preview: { port: 0, host: "127.0.0.1", strictPort: false } });
  } catch (e) {
    throw new BrowserSetupError(`cannot start vite preview over ${join(root, "dist")}: ${(e as Error).message}`);
  }
  const address = server.httpServer.address();
  const base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const stopServer = () => server.close().catch(() => undefined);
  let browser: Browser;
  try {
    const args = backend === "webgpu" ? [...CHROMIUM_ARGS, "--enable-unsafe-webgpu"] : CHROMIUM_ARGS;
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({ executablePath, args, headless: true });
  } catch (e) {
    await stopServer();
    throw new BrowserSetupError(`cannot start the browser: ${(e as Error).message}`);
  }
  const timeout = RUN_TIMEOUT_MS[backend];

  return {
    async run(scenario, { replayRun, tracePath = null } = {}) {
      const context = await browser.newContext();
      if (tracePath) await context.tracing.start({ screenshots: true, snapshots: true });
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      try {
        const status = page.getByTestId("run-status");
        const shown = forBackend(scenario, backend);
        // The JSON editor too for a scenario that reaches other hosts (a hub model, a remote environment): its link
        // would ask first; running the suite is the approval.
        if (scenario.policy.kind === "replay" || modules.length || contactsOtherHosts(scenario)) {
          // A link cannot carry a file or a module: the runner does what a person would, loading the modules and
          // picking the run to replay in the set-up form, then putting the scenario in the JSON editor and
          // pressing Run.
          await page.goto(`${base}/`);
          await loadModules(page, modules);
          let run: Scenario = shown;
          if (scenario.policy.kind === "replay") {
            if (replayRun === undefined) throw new Error(`no run given for the replay policy's file '${scenario.policy.file}'`);
            const name = scenario.policy.file.split(/[\\/]/).pop()!;
            await page.getByLabel("Policy", { exact: true }).selectOption("replay");
            await page.getByLabel("Run to replay").setInputFiles({ name, mimeType: "application/json", buffer: Buffer.from(replayRun) });
            run = { ...scenario, policy: { ...scenario.policy, file: name } };
          }
          const editor = page.getByLabel("Scenario", { exact: true });
          if (!(await editor.isVisible())) await page.getByText("Scenario JSON (what runs)").click();
          await editor.fill(JSON.stringify(run));
          await page.getByRole("button", { name: "Run", exact: true }).click();
        } else {
          await page.goto(`${base}/${shareHash(shown, true)}`);
        }
        try {
          await page.waitForFunction(
            () => {
              const text = document.querySelector('[data-testid="run-status"]')?.textContent;
              return text === "finished" || text === "failed" || document.querySelector('[data-testid="link-error"]') !== null;
            },
            undefined,
            { timeout },
          );
        } catch {
          const now = (await status.textContent().catch(() => null)) ?? "?";
          throw new Error(`not finished after ${timeout / 1000} s (status: ${now})${pageErrors.length ? `; page errors: ${pageErrors.join("; ")}` : ""}`);
        }
        const linkError = page.getByTestId("link-error");
        if (await linkError.count()) throw new Error(`the page could not read the scenario's link: ${(await linkError.textContent())?.trim()}`);
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
        if (tracePath) await context.tracing.stop({ path: tracePath }).catch(() => undefined);
        await context.close();
      }
    },
    async close() {
      await browser.close().catch(() => undefined);
      await stopServer();
    },
  };
}
