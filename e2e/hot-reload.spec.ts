import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "./fixtures.js";

const root = join(import.meta.dirname, "..");
const port = 4391;
const devUrl = `http://127.0.0.1:${port}`;
const file = join(root, "environments/_e2e_hot.js");
const starter = readFileSync(join(root, "environments/number_guess.js"), "utf8");
/** The starter under another name and title. */
const variant = (title: string) => starter.replace('name: "number_guess"', 'name: "e2e_hot"').replace('title: "Number guess (starter)"', `title: "${title}"`);

// The development server (npm run dev) serves the checkout itself: saving an environment module reloads it.
test.describe("an environment added to the checkout", () => {
  let server: ChildProcess;
  test.beforeAll(async () => {
    // Vite itself, not through npx: killing npx would leave the server running.
    server = spawn(process.execPath, [join(root, "node_modules/vite/bin/vite.js"), "--port", String(port), "--strictPort", "--host", "127.0.0.1"], { cwd: root, stdio: "ignore" });
    for (let i = 0; i < 120; i++) {
      try {
        if ((await fetch(devUrl)).ok) return;
      } catch {}
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error("the dev server did not start");
  });
  test.afterAll(() => {
    rmSync(file, { force: true });
    server?.kill();
  });

  test("appears in the lab, hot-reloads when edited, and goes when deleted", async ({ page, guard }) => {
    test.setTimeout(120_000);
    guard.allow(devUrl);
    await page.goto(devUrl);
    const entry = page.locator('[data-testid="user-environment"]', { hasText: "environments/_e2e_hot.js" });
    await expect(page.locator('[data-testid="user-environment"][data-name="number_guess"]')).toHaveAttribute("data-status", "ready", { timeout: 60_000 });
    await expect(entry).toHaveCount(0);

    writeFileSync(file, variant("Hot one"));
    await expect(entry).toContainText("Hot one", { timeout: 30_000 });
    await expect(page.getByLabel("Environment", { exact: true }).locator("option", { hasText: "Hot one (your module)" })).toHaveCount(1);

    writeFileSync(file, variant("Hot two"));
    await expect(entry).toContainText("Hot two", { timeout: 30_000 });
    await expect(entry).toHaveAttribute("data-status", "ready");

    // A mistake while editing shows the error at once; fixing it brings the environment back.
    writeFileSync(file, `${variant("Hot three")}\nthrow new Error("half-written");\n`);
    await expect(entry.getByTestId("env-module-error")).toContainText("half-written", { timeout: 30_000 });
    writeFileSync(file, variant("Hot three"));
    await expect(entry).toContainText("Hot three", { timeout: 30_000 });

    rmSync(file);
    await expect(entry).toHaveCount(0, { timeout: 30_000 });
  });
});
