import { defineConfig } from "@playwright/test";

// Debian's Chromium (Playwright's own browser download cannot work here); `npm test` installs it when missing.
const executablePath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const port = Number(process.env.E2E_PORT || 4317);
// E2E_DIST: another built site than dist/ (so two checkouts' builds never overwrite each other).
const outDir = process.env.E2E_DIST ? ` --outDir ${JSON.stringify(process.env.E2E_DIST)}` : "";
const chromiumArgs = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"];

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  timeout: 60_000,
  fullyParallel: false,
  workers: 1,
  reporter: [["list"]],
  use: { baseURL: `http://127.0.0.1:${port}` },
  projects: [
    { name: "default", testIgnore: /webgpu\.spec\.ts/, use: { launchOptions: { executablePath, args: chromiumArgs } } },
    // Headless Chromium here offers WebGPU only as a software (SwiftShader) adapter, and only with this flag.
    { name: "webgpu", testMatch: /webgpu\.spec\.ts/, use: { launchOptions: { executablePath, args: [...chromiumArgs, "--enable-unsafe-webgpu"] } } },
  ],
  // The built site (npm test runs `vite build` first), served as any static host would serve it.
  webServer: {
    command: `npx vite preview --port ${port} --strictPort --host 127.0.0.1${outDir}`,
    url: `http://127.0.0.1:${port}`,
    reuseExistingServer: false,
    timeout: 60_000,
  },
});
