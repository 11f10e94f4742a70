import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.js";

const root = join(import.meta.dirname, "..");
const starter = readFileSync(join(root, "environments/number_guess.js"), "utf8");
/** The starter under another name and title. */
const variant = (title: string, name = "ver_env") => starter.replace('name: "number_guess"', `name: "${name}"`).replace('title: "Number guess (starter)"', `title: "${title}"`);
const file = (name: string, text: string) => ({ name, mimeType: "text/javascript", buffer: Buffer.from(text) });
const fingerprintOf = (text: string) => createHash("sha256").update(text, "utf8").digest("hex").slice(0, 8);

const picker = (page: Page) => page.getByLabel("Environment module file");
/** The module of `origin` loaded on the page (its first `<code>` names its origin). */
const loaded = (page: Page, origin: string) => page.getByTestId("user-environment").filter({ has: page.locator("code").getByText(origin, { exact: true }) });
const keptCopy = (page: Page, origin: string) => page.locator(`[data-testid="kept-environment"][data-origin="${origin}"]`);

/** Every URL the page and its Workers request from now on. */
function recordRequests(page: Page): string[] {
  const urls: string[] = [];
  page.context().on("request", (r) => urls.push(r.url()));
  return urls;
}

/** One sample of the number game, its secret 1, guessed at once (reward 1). */
async function runOneGuess(page: Page) {
  await page.getByLabel("Dataset config").fill('{"max_number": 1, "max_guesses": 1}');
  await page.getByLabel("Samples").fill("1");
  await page.getByLabel("Policy", { exact: true }).selectOption("scripted");
  await page.getByLabel("Scripted responses").fill(JSON.stringify([["<guess>1</guess>"]]));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 30_000 });
  await expect(page.getByTestId("transcript")).toContainText("<environment>correct: 1</environment>");
}

test("a module loaded again shows its next version and whether its text changed; after a reload its kept copy loads and runs, fetching nothing", async ({ page, baseURL }) => {
  test.setTimeout(90_000);
  await page.goto("/");
  const entry = loaded(page, "ver_env.js");
  const one = variant("Version one");
  const two = variant("Version two");

  await picker(page).setInputFiles(file("ver_env.js", one));
  await expect(entry).toHaveAttribute("data-status", "ready");
  await expect(entry.getByTestId("env-version-number")).toHaveText("v1");
  await expect(entry.getByTestId("env-version-time")).toHaveText(/^loaded \d\d:\d\d:\d\d$/);
  await expect(entry.getByTestId("env-version-fingerprint")).toHaveText(fingerprintOf(one));
  await expect(entry.getByTestId("env-version-change")).toHaveCount(0);

  // The same file, fixed: v2, changed.
  await picker(page).setInputFiles(file("ver_env.js", two));
  await expect(entry.getByTestId("env-version-number")).toHaveText("v2");
  await expect(entry.getByTestId("env-version-change")).toHaveText("(changed)");
  await expect(entry.getByTestId("env-version-fingerprint")).toHaveText(fingerprintOf(two));
  await expect(entry).toContainText("Version two");

  // Loaded again without a change: v3, the same source as v2.
  await picker(page).setInputFiles(file("ver_env.js", two));
  await expect(entry.getByTestId("env-version-number")).toHaveText("v3");
  await expect(entry.getByTestId("env-version-change")).toHaveText("(same source as v2)");
  await expect(entry.getByTestId("env-version")).toHaveText(new RegExp(`^v3 · loaded \\d\\d:\\d\\d:\\d\\d · ${fingerprintOf(two)} \\(same source as v2\\)$`));
  await expect(entry.getByTestId("env-kept")).toBeVisible();

  // A reload: the module is offered (kept from an earlier visit), not loaded.
  const requests = recordRequests(page);
  await page.reload();
  const kept = keptCopy(page, "ver_env.js");
  await expect(kept).toContainText("Version two");
  await expect(kept.getByTestId("env-version-number")).toHaveText("v3");
  await expect(page.getByTestId("kept-environments")).toContainText("Kept from an earlier visit");
  await expect(entry).toHaveCount(0);
  await expect(page.getByLabel("Environment", { exact: true }).locator("option", { hasText: "Version two" })).toHaveCount(0);

  // Loaded from the kept copy: v4, the same source as v3; it runs.
  await page.getByRole("button", { name: "Load the kept copy of ver_env.js" }).click();
  await expect(entry).toHaveAttribute("data-status", "ready");
  await expect(entry.getByTestId("env-version-number")).toHaveText("v4");
  await expect(entry.getByTestId("env-version-change")).toHaveText("(same source as v3)");
  await expect(kept).toHaveCount(0);
  await expect(page.getByLabel("Environment", { exact: true })).toHaveValue("ver_env");
  await runOneGuess(page);

  // Since the reload, nothing but the lab's own files (and the module's blob in its Worker) was requested.
  const origin = new URL(baseURL!).origin;
  expect(requests.length).toBeGreaterThan(0);
  expect(requests.filter((url) => !url.startsWith("blob:") && !url.startsWith("data:") && new URL(url).origin !== origin)).toEqual([]);
});

test("a module with a syntax error is kept with its line and column, shown again after a reload; forgotten, it is gone", async ({ page }) => {
  await page.goto("/");
  const source = 'export default {\n  name: "typo_env",\n  create() { return { step( } }; },\n};\n';
  await picker(page).setInputFiles(file("typo_env.js", source));
  const typo = loaded(page, "typo_env.js");
  await expect(typo).toHaveAttribute("data-status", "failed");
  await expect(typo.getByTestId("env-module-error")).toContainText("typo_env.js:3:29: Unexpected token");
  await expect(typo.getByTestId("env-kept")).toBeVisible();
  // A second module, kept too: after a reload it shows the kept list was read.
  await picker(page).setInputFiles(file("keep_me.js", variant("Keep me", "keep_me")));
  await expect(loaded(page, "keep_me.js").getByTestId("env-kept")).toBeVisible();

  await page.reload();
  const kept = keptCopy(page, "typo_env.js");
  await expect(kept).toHaveAttribute("data-status", "failed");
  await expect(kept).toContainText("its last load failed");
  await expect(kept.getByTestId("env-module-error")).toContainText("typo_env.js:3:29: Unexpected token");
  await expect(kept.getByTestId("env-module-error")).toContainText("create() { return { step( } }; },");
  await expect(keptCopy(page, "keep_me.js")).toBeVisible();

  // Loaded again from the kept copy, it fails again, saying where.
  await page.getByRole("button", { name: "Load the kept copy of typo_env.js" }).click();
  await expect(loaded(page, "typo_env.js").getByTestId("env-module-error")).toContainText("typo_env.js:3:29: Unexpected token");
  await expect(loaded(page, "typo_env.js").getByTestId("env-version-number")).toHaveText("v2");
  await loaded(page, "typo_env.js").getByRole("button", { name: "remove" }).click();
  await expect(loaded(page, "typo_env.js")).toHaveCount(0);

  await page.reload();
  await page.getByRole("button", { name: "Forget the kept copy of keep_me.js" }).click();
  await expect(keptCopy(page, "keep_me.js")).toHaveCount(0);
  await expect(keptCopy(page, "typo_env.js")).toHaveCount(0);
  await page.reload();
  // Both are gone for good: neither is offered once the page has read what is kept (a module loaded waits for that
  // list, to go on from a kept copy's version: this one starts at v1).
  await picker(page).setInputFiles(file("probe_env.js", variant("Probe", "probe_env")));
  await expect(loaded(page, "probe_env.js").getByTestId("env-version-number")).toHaveText("v1");
  await expect(page.getByTestId("kept-environment")).toHaveCount(0);
});

test("a module from a URL is kept as fetched: after a reload its kept copy loads without contacting that host", async ({ page }) => {
  const url = "http://localhost:4399/far_env.js";
  let served = 0;
  // A host the page may reach (the lab's CSP allows localhost), stood in for by the test.
  await page.route(url, (route) => {
    served += 1;
    return route.fulfill({ status: 200, contentType: "text/javascript", headers: { "Access-Control-Allow-Origin": "*" }, body: variant("Far away", "far_env") });
  });
  await page.goto("/");
  // The panel is folded while it holds only this checkout's modules.
  await page.getByTestId("user-environments").locator("summary").click();
  await page.getByLabel("Environment module URL").fill(url);
  await page.getByRole("button", { name: "Load from URL" }).click();
  const far = loaded(page, url);
  await expect(far).toHaveAttribute("data-status", "ready");
  await expect(far).toContainText("Far away");
  await expect(far.getByTestId("env-kept")).toBeVisible();
  expect(served).toBe(1);

  const requests = recordRequests(page);
  await page.reload();
  await expect(keptCopy(page, url)).toContainText("Far away");
  // The reload fetched nothing from it.
  expect(served).toBe(1);
  await page.getByRole("button", { name: `Load the kept copy of ${url}` }).click();
  await expect(far).toHaveAttribute("data-status", "ready");
  await expect(far.getByTestId("env-version-change")).toHaveText("(same source as v1)");
  await expect(far).toContainText("(url)");
  expect(served).toBe(1);
  expect(requests.filter((r) => r.startsWith("http://localhost:4399"))).toEqual([]);
});

test("storage that refuses to keep a module says so in the panel, and the module still works on the page", async ({ page }) => {
  // The browser refuses every write to the modules' store as a full quota does.
  await page.addInitScript(() => {
    const put = IDBObjectStore.prototype.put;
    IDBObjectStore.prototype.put = function (this: IDBObjectStore, ...args: Parameters<typeof put>) {
      if (this.name === "modules") throw new DOMException("quota", "QuotaExceededError");
      return put.apply(this, args);
    };
  });
  await page.goto("/");
  await picker(page).setInputFiles(file("ver_env.js", variant("Still works")));
  const entry = loaded(page, "ver_env.js");
  await expect(entry).toHaveAttribute("data-status", "ready");
  await expect(page.getByTestId("module-storage-problem")).toHaveText(
    "could not keep ver_env.js in this browser: the browser's storage for this site is full (QuotaExceededError: quota). ver_env.js works on this page, but a reload will not offer it again.",
  );
  await expect(entry.getByTestId("env-kept")).toHaveCount(0);
  await expect(page.getByLabel("Environment", { exact: true })).toHaveValue("ver_env");
  await runOneGuess(page);
});
