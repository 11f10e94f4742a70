import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { Page, Worker } from "@playwright/test";
import { expect, test } from "./fixtures.js";

const root = join(import.meta.dirname, "..");
const status = (page: Page) => page.getByTestId("run-status");

/** A scripted policy for one sample of the number-guess game (it sits behind the Policy choice). */
async function scriptGuesses(page: Page, guesses: string[]) {
  await page.getByLabel("Samples").fill("1");
  await page.getByLabel("Policy", { exact: true }).selectOption("scripted");
  await page.getByLabel("Scripted responses").fill(JSON.stringify([guesses]));
}

test("this checkout's starter environment is in the lab, runs in its Worker, and draws its own view", async ({ page }) => {
  await page.goto("/");
  await expect(page.locator('[data-testid="user-environment"][data-name="number_guess"]')).toHaveAttribute("data-status", "ready");
  await page.getByLabel("Environment", { exact: true }).selectOption("number_guess");
  await page.getByLabel("Dataset config").fill('{"max_number": 4, "max_guesses": 4}');
  await scriptGuesses(page, ["<guess>1</guess>", "<guess>2</guess>", "<guess>3</guess>", "<guess>4</guess>"]);
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  // Counting up from 1 finds any secret in 1..4: the last observation says so, and the reward is 1.
  await expect(page.getByTestId("transcript")).toContainText("<environment>correct:");
  await expect(page.getByTestId("termination")).toHaveText("terminated by the environment");
  await expect(page.locator('[data-metric="mean_total_reward"]')).toContainText("1");
  await page.getByTestId("turn").first().click();
  await page.getByRole("tab", { name: "Environment" }).click();
  const view = page.getByTestId("env-view");
  await expect(view).toHaveAttribute("data-kind", "steps");
  await expect(view).toContainText("guess 1");
});

test("a picked module runs in its own Worker: no DOM, errors shown with the module's stack, other samples unharmed", async ({ page }) => {
  await page.goto("/");
  const file = (name: string, text: string) => ({ name, mimeType: "text/javascript", buffer: Buffer.from(text) });
  const picker = page.getByLabel("Environment module file");

  // A module that fails as it loads: its error and the line it threw at are shown.
  await picker.setInputFiles(file("broken_env.js", 'const x = 1;\nthrow new Error("cannot start: missing table");\nexport default {};\n'));
  const broken = page.locator('[data-testid="user-environment"]', { hasText: "broken_env.js" });
  await expect(broken).toHaveAttribute("data-status", "failed");
  await expect(broken.getByTestId("env-module-error")).toContainText("cannot start: missing table");
  await expect(broken.getByTestId("env-module-error")).toContainText("broken_env.js:2");

  // A hostile module: it looks for the page and tries to write to it; it finds no DOM, and its step throws on
  // every other sample (by its secret's parity), which must fail those samples only.
  const hostile = `
const sees = typeof document === "undefined" ? "no DOM" : "the DOM";
try { document.body.innerHTML = "<h1 id=pwned>owned</h1>"; } catch {}
export default {
  name: "picky_env",
  title: "Picky (" + sees + ")",
  create() {
    return {
      step(logs, metadata) {
        if (metadata.some((m) => m.n % 2 === 1)) throw new Error("odd sample " + metadata.map((m) => m.n).join(","));
        return { observations: logs.map(() => ({ role: "environment", content: "<environment>fine</environment>" })),
          metadata: logs.map(() => null), next_stop_strings: null, rewards: logs.map(() => 1), terminateds: logs.map(() => true), answers: null };
      },
    };
  },
  generateDataset({ size, taskName }) {
    return Array.from({ length: size }, (_, n) => ({ task_name: taskName, message_log: [{ role: "user", content: "go" }], extra_env_info: { n }, stop_strings: null }));
  },
};`;
  await picker.setInputFiles(file("picky_env.js", hostile));
  const picky = page.locator('[data-testid="user-environment"][data-name="picky_env"]');
  await expect(picky).toHaveAttribute("data-status", "ready");
  await expect(picky).toContainText("Picky (no DOM)");
  await expect(page.locator("#pwned")).toHaveCount(0);

  // Async mode steps each sample on its own: samples 1 and 3 fail with the stack, 0 and 2 finish.
  await expect(page.getByLabel("Environment", { exact: true })).toHaveValue("picky_env");
  await page.getByLabel("Samples").fill("4");
  await page.getByLabel("Mode", { exact: true }).selectOption("async");
  await page.getByLabel("Policy", { exact: true }).selectOption("scripted");
  await page.getByLabel("Scripted responses").fill(JSON.stringify([["a"], ["b"], ["c"], ["d"]]));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  const failedAt = (n: number) => new RegExp(`^error: environment 'picky_env' step failed: Error: odd sample ${n}\\n\\s+at Object\\.step \\(picky_env\\.js:10:\\d+\\)$`);
  await expect(page.getByTestId("termination")).toHaveText(["terminated by the environment", failedAt(1), "terminated by the environment", failedAt(3)]);
  await page.getByTestId("sample-row").nth(1).click();
  await expect(page.getByTestId("transcript")).toContainText("step failed: Error: odd sample 1");
  await expect(page.getByTestId("transcript")).toContainText("picky_env.js:");
});

test.describe("a remote environment over HTTP", () => {
  let server: ChildProcess;
  let url = "";
  test.beforeAll(async () => {
    server = spawn("python3", [join(root, "environments/remote/number_guess_server.py"), "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    url = await new Promise<string>((resolve, reject) => {
      server.stdout!.on("data", (chunk: Buffer) => {
        const match = /listening on (\S+)/.exec(chunk.toString());
        if (match) resolve(match[1]!);
      });
      server.on("exit", (code) => reject(new Error(`the Python server exited with ${code}`)));
    });
  });
  test.afterAll(() => {
    server?.kill();
  });

  test("the lab steps a Python environment served on localhost", async ({ page, guard }) => {
    guard.allow(new URL(url).origin);
    await page.goto("/");
    await page.getByLabel("Environment", { exact: true }).selectOption("http");
    await page.getByLabel("Environment server URL").fill(url);
    await page.getByRole("button", { name: "Connect" }).click();
    await expect(page.getByTestId("remote-env-status")).toHaveText(/^Connected: Number guess \(Python, over HTTP\)/);
    await expect(page.getByLabel("Task name")).toHaveValue("number_guess");
    await page.getByLabel("Dataset config").fill('{"max_number": 3, "max_guesses": 3}');
    await scriptGuesses(page, ["<guess>1</guess>", "<guess>2</guess>", "<guess>3</guess>"]);
    await page.getByRole("button", { name: "Run" }).click();
    await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
    await expect(page.getByTestId("transcript")).toContainText("<environment>correct:");
    await expect(page.locator('[data-metric="mean_total_reward"]')).toContainText("1");

    // The server refuses a dataset setting: the run fails with the server's words and the field, the page lives on.
    await page.getByLabel("Dataset config").fill('{"colour": "red"}');
    await page.getByRole("button", { name: "Run" }).click();
    await expect(status(page)).toHaveText("failed", { timeout: 30_000 });
    await expect(page.getByTestId("run-error")).toContainText(`dataset.config: ${url}/dataset answered HTTP 500: ValueError: unknown key 'colour'`);
  });
});

test("a picked module with a syntax error names its line and column, with the line itself", async ({ page }) => {
  await page.goto("/");
  const source = 'export default {\n  name: "typo_env",\n  create() { return { step( } }; },\n};\n';
  await page.getByLabel("Environment module file").setInputFiles({ name: "typo_env.js", mimeType: "text/javascript", buffer: Buffer.from(source) });
  const typo = page.locator('[data-testid="user-environment"]', { hasText: "typo_env.js" });
  await expect(typo).toHaveAttribute("data-status", "failed");
  await expect(typo.getByTestId("env-module-error")).toContainText("typo_env.js:3:29: Unexpected token");
  await expect(typo.getByTestId("env-module-error")).toContainText("create() { return { step( } }; },");
});

test("a picked module runs in an opaque origin: none of the page's storage, no channel to the page, none of the lab's files", async ({ page }) => {
  await page.goto("/");
  const lab = new URL(page.url()).origin;
  // The page keeps runs and modules in IndexedDB: make sure there is something to find.
  await expect.poll(() => page.evaluate(async () => (await indexedDB.databases()).length)).toBeGreaterThan(0);
  const nosy = `
const reachable = (name) => { for (let o = globalThis; o; o = Object.getPrototypeOf(o)) if (Object.getOwnPropertyDescriptor(o, name)) return true; return false; };
const found = ["indexedDB", "caches", "BroadcastChannel", "Worker", "SharedWorker", "postMessage", "close"].filter(reachable);
for (const name of ["storage", "locks", "serviceWorker"]) if (name in navigator) found.push("navigator." + name);
// The wall behind those seals: the Worker's origin is opaque, so the lab's own files are another site's.
if (self.origin !== "null") found.push("origin " + self.origin);
try { await fetch(${JSON.stringify(lab + "/index.html")}); found.push("the lab's index.html"); } catch {}
// Passing itself off as another module: a forged "loaded" to the page, or a forged "load" of other code to the host.
const forged = { name: "forged_env", title: "Forged", description: "", defaultTaskName: "forged_env", hasView: false };
try { self.postMessage({ type: "loaded", description: forged }); } catch {}
self.dispatchEvent(new MessageEvent("message", { data: { type: "load", origin: "forged.js",
  source: "export default { name: 'forged_env', title: 'Forged', create() {}, generateDataset() { return []; } };" } }));
export default {
  name: "nosy_env",
  title: "Nosy (" + (found.join(", ") || "nothing found") + ")",
  create() {
    return { step(logs) {
      return { observations: logs.map(() => ({ role: "environment", content: "ok" })), metadata: logs.map(() => null),
        next_stop_strings: null, rewards: logs.map(() => 0), terminateds: logs.map(() => true), answers: null };
    } };
  },
  generateDataset({ size, taskName }) {
    return Array.from({ length: size }, () => ({ task_name: taskName, message_log: [{ role: "user", content: "go" }], extra_env_info: {}, stop_strings: null }));
  },
};`;
  await page.getByLabel("Environment module file").setInputFiles({ name: "nosy_env.js", mimeType: "text/javascript", buffer: Buffer.from(nosy) });
  const loaded = page.locator('[data-testid="user-environment"][data-name="nosy_env"]');
  await expect(loaded).toHaveAttribute("data-status", "ready");
  await expect(loaded).toContainText("Nosy (nothing found)");
  // Neither forgery took: the module is still what it loaded as, and nothing named forged_env is offered. (The wait
  // gives a forged answer time to arrive; a slow machine could only let this pass without it, never fail it.)
  await page.waitForTimeout(500);
  await expect(loaded).toContainText("Nosy (nothing found)");
  await expect(page.locator('[data-testid="user-environment"][data-name="forged_env"]')).toHaveCount(0);
  await expect(page.getByLabel("Environment", { exact: true }).locator('option[value="forged_env"]')).toHaveCount(0);
});

test("an error a module throws after it loaded is shown once, as the module's, and the module stays ready", async ({ page }) => {
  await page.goto("/");
  const late = `
setTimeout(() => { throw new Error("late boom"); }, 200);
export default {
  name: "late_env",
  title: "Late",
  create() { return { step(logs) { return { observations: logs.map(() => ({ role: "environment", content: "ok" })), metadata: logs.map(() => null),
    next_stop_strings: null, rewards: logs.map(() => 0), terminateds: logs.map(() => true), answers: null }; } }; },
  generateDataset({ size, taskName }) {
    return Array.from({ length: size }, () => ({ task_name: taskName, message_log: [{ role: "user", content: "go" }], extra_env_info: {}, stop_strings: null }));
  },
};`;
  await page.getByLabel("Environment module file").setInputFiles({ name: "late_env.js", mimeType: "text/javascript", buffer: Buffer.from(late) });
  const loaded = page.locator('[data-testid="user-environment"][data-name="late_env"]');
  await expect(loaded.getByTestId("env-module-error")).toContainText("late boom");
  await expect(loaded.getByTestId("env-module-error")).toContainText("late_env.js:2");
  await expect(loaded.getByTestId("env-module-error")).not.toContainText("did not start");
  // Loaded it is, and loaded it stays: the error was the module's, outside any call. (The fixture fails the test on
  // any error of the page's: the module's must not surface as one.)
  await expect(loaded).toHaveAttribute("data-status", "ready");
  await expect(page.getByLabel("Environment", { exact: true }).locator('option[value="late_env"]')).toHaveCount(1);
});

test("when the host's code cannot be read, each module fails saying so, and the next load reads it again", async ({ page, guard }) => {
  let refused = 0;
  await page.route(/\/assets\/env-host-worker-[^/]+\.js$/, (route) => (refused++ === 0 ? route.fulfill({ status: 404, body: "gone" }) : route.continue()));
  await page.goto("/");
  const starter = page.locator('[data-testid="user-environment"]').filter({ hasText: "number_guess.js" });
  await expect(starter).toHaveAttribute("data-status", "failed");
  await expect(starter.getByTestId("env-module-error")).toContainText("the environment host's code could not be read: HTTP 404");
  // The read is tried again by the next load, not kept failed: this one reads it and loads.
  await page.getByLabel("Environment module file").setInputFiles({
    name: "again_env.js",
    mimeType: "text/javascript",
    buffer: Buffer.from((await import("node:fs")).readFileSync(join(root, "environments/number_guess.js"), "utf8").replace('name: "number_guess"', 'name: "again_env"')),
  });
  await expect(page.locator('[data-testid="user-environment"][data-name="again_env"]')).toHaveAttribute("data-status", "ready");
  // The browser logs the 404 it was served; nothing else may be logged (an unhandled rejection of the failed read was).
  const served404 = (m: string) => m === "Failed to load resource: the server responded with a status of 404 (Not Found)";
  expect(guard.consoleErrors.filter(served404)).toHaveLength(1);
  guard.consoleErrors.splice(0, Infinity, ...guard.consoleErrors.filter((m) => !served404(m)));
});

test("served under a Content-Security-Policy without the sandbox relay's hash (an older build's headers), a module fails saying so", async ({ page, guard }) => {
  // The lab's page as a host with stale headers would serve it: its policy, header and <meta> alike, lacks the hash.
  const stale = (csp: string) => csp.replace(/ (&#39;|')sha256-[^&']+(&#39;|')/g, "");
  await page.route((url) => url.pathname === "/" || url.pathname === "/index.html", async (route) => {
    const response = await route.fetch();
    const headers = { ...response.headers(), "content-security-policy": stale(response.headers()["content-security-policy"]!) };
    const body = stale(await response.text());
    expect(body).not.toContain("sha256");
    await route.fulfill({ response, headers, body });
  });
  await page.goto("/");
  const starter = page.locator('[data-testid="user-environment"][data-name="number_guess"]');
  const failed = page.locator('[data-testid="user-environment"][data-status="failed"]').filter({ hasText: "number_guess" });
  // The relay never runs, so it never answers: the load fails once the relay's deadline (10 s) has passed.
  await expect(failed).toContainText("did not answer in 10 s", { timeout: 30_000 });
  await expect(failed).toContainText("dist/_headers");
  await expect(starter).toHaveCount(0);
  // The browser's own word on why (the page logs it): expected here, and nothing else may be.
  const blocked = (m: string) => m.startsWith("Executing inline script violates the following Content Security Policy");
  expect(guard.consoleErrors.filter(blocked).length).toBeGreaterThan(0);
  guard.consoleErrors.splice(0, Infinity, ...guard.consoleErrors.filter((m) => !blocked(m)));
});

test("a step stuck in a synchronous loop past its deadline: the lab restarts the module's host, and the run goes on on the new one", async ({ page }) => {
  await page.goto("/");
  // Its step never returns when the reply says "loop": the host Worker is stuck, and answers nothing after.
  const loopy = `
export default {
  name: "loopy_env",
  title: "Loopy",
  create() {
    return { step(logs) {
      const last = logs[0].at(-1).content;
      if (last.includes("loop")) for (;;) {}
      return { observations: logs.map(() => ({ role: "environment", content: "<environment>ok " + last + "</environment>" })), metadata: logs.map(() => null),
        next_stop_strings: null, rewards: logs.map(() => 1), terminateds: logs.map(() => false), answers: null };
    } };
  },
  generateDataset({ size, taskName }) {
    return Array.from({ length: size }, () => ({ task_name: taskName, message_log: [{ role: "user", content: "say something" }], extra_env_info: {}, stop_strings: null }));
  },
};`;
  await expect(page.locator('[data-testid="user-environment"][data-name="number_guess"]')).toHaveAttribute("data-status", "ready");
  // The hosts started from here on (each in its sandboxed frame's opaque origin), and those that ended.
  const hosts: Worker[] = [];
  page.on("worker", (w) => w.url().startsWith("blob:null/") && hosts.push(w));
  const ended = new Set<Worker>();
  page.on("worker", (w) => w.on("close", () => ended.add(w)));
  await page.getByLabel("Environment module file").setInputFiles({ name: "loopy_env.js", mimeType: "text/javascript", buffer: Buffer.from(loopy) });
  const loaded = page.locator('[data-testid="user-environment"][data-name="loopy_env"]');
  await expect(loaded).toHaveAttribute("data-status", "ready");
  expect(hosts).toHaveLength(1);
  await expect(page.getByLabel("Environment", { exact: true })).toHaveValue("loopy_env");
  await page.getByLabel("Samples").fill("2");
  await page.getByLabel("Mode", { exact: true }).selectOption("async");
  await page.getByLabel("max_rollout_turns").fill("2");
  await page.getByLabel("Environment step timeout (ms, 0: none)").fill("1000");
  await page.getByLabel("Policy", { exact: true }).selectOption("human");
  await page.getByRole("button", { name: "Run" }).click();
  const reply = async (sample: number, text: string) => {
    const turn = page.getByTestId("human-turn").filter({ has: page.getByLabel(`Your reply for sample ${sample}`) });
    await turn.getByLabel(`Your reply for sample ${sample}`).fill(text);
    await turn.getByRole("button", { name: "Send" }).click();
  };
  await expect(page.getByTestId("human-turn")).toHaveCount(2);
  await reply(0, "let us loop");
  // Past the deadline, the host does not answer the page's ping: it is started again from the same text.
  await expect(loaded.getByTestId("env-restarted")).toContainText("Restarted once", { timeout: 30_000 });
  await expect(loaded.getByTestId("env-restarted")).toContainText("stopped answering after a step ran past its deadline");
  await expect(loaded).toHaveAttribute("data-status", "ready");
  // The stuck one is gone (its frame removed), not left spinning beside the new one.
  await expect.poll(() => hosts.length).toBe(2);
  await expect.poll(() => ended.has(hosts[0]!)).toBe(true);
  expect(ended.has(hosts[1]!)).toBe(false);
  // Sample 1's turns are stepped by the new host, in the same run: before, they went to the stuck one.
  await reply(1, "fine");
  await expect(page.getByTestId("human-turn")).toHaveCount(1);
  await reply(1, "still fine");
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  await expect(page.getByTestId("termination")).toHaveText([/^error: environment '.*' step timed out after 1000 ms$/, "max turns reached"]);
  await page.getByTestId("sample-row").nth(1).click();
  await expect(page.getByTestId("transcript")).toContainText("<environment>ok still fine</environment>");
});

test("a module loaded again during a run: the run keeps stepping the version it started with, the next run gets the new one", async ({ page }) => {
  await page.goto("/");
  const versioned = (tag: string) => ({
    name: "versioned_env.js",
    mimeType: "text/javascript",
    buffer: Buffer.from(`
export default {
  name: "versioned_env",
  create() {
    return { step(logs) {
      return { observations: logs.map(() => ({ role: "environment", content: "<environment>${tag}</environment>" })), metadata: logs.map(() => null),
        next_stop_strings: null, rewards: logs.map(() => 1), terminateds: logs.map(() => false), answers: null };
    } };
  },
  generateDataset({ size, taskName }) {
    return Array.from({ length: size }, () => ({ task_name: taskName, message_log: [{ role: "user", content: "go" }], extra_env_info: {}, stop_strings: null }));
  },
};`),
  });
  const picker = page.getByLabel("Environment module file");
  const loaded = page.locator('[data-testid="user-environment"][data-name="versioned_env"]');
  await picker.setInputFiles(versioned("first version"));
  await expect(loaded).toHaveAttribute("data-status", "ready");
  await page.getByLabel("Samples").fill("1");
  await page.getByLabel("max_rollout_turns").fill("2");
  await page.getByLabel("Policy", { exact: true }).selectOption("human");
  await page.getByRole("button", { name: "Run" }).click();
  const reply = page.getByLabel("Your reply for sample 0");
  await reply.fill("one");
  await page.getByRole("button", { name: "Send" }).click();
  await expect(page.getByTestId("transcript")).toContainText("<environment>first version</environment>");
  // Loaded again while the run waits for its second turn: the run's host stays until the run ends.
  await picker.setInputFiles(versioned("second version"));
  await expect(loaded).toContainText("v2");
  await expect(loaded).toHaveAttribute("data-status", "ready");
  await reply.fill("two");
  await page.getByRole("button", { name: "Send" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  await expect(page.getByTestId("termination")).toHaveText("max turns reached");
  await expect(page.getByTestId("transcript")).not.toContainText("second version");
  // The next run steps the module as loaded now.
  await page.getByLabel("Policy", { exact: true }).selectOption("scripted");
  await page.getByLabel("Scripted responses").fill(JSON.stringify([["a", "b"]]));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  await expect(page.getByTestId("transcript")).toContainText("<environment>second version</environment>");
  await expect(page.getByTestId("transcript")).not.toContainText("first version");
});
