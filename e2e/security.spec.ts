import { createHash } from "node:crypto";
import { SANDBOX_RELAY } from "../src/app/envs/sandbox-relay.js";
import { expect, test } from "./fixtures.js";

test("the built lab is served with its Content-Security-Policy, and the policy holds", async ({ page, guard, request }) => {
  const response = await request.get("/");
  const csp = response.headers()["content-security-policy"] ?? "";
  const directive = (name: string) => csp.split(";").map((d) => d.trim()).find((d) => d.startsWith(`${name} `)) ?? "";
  // One inline script runs, named by its hash: the relay of the frame that starts a user module's Worker.
  const relay = createHash("sha256").update(SANDBOX_RELAY).digest("base64");
  expect(directive("script-src")).toBe(`script-src 'self' 'wasm-unsafe-eval' blob: 'sha256-${relay}'`);
  expect(csp).not.toContain("unsafe-inline");
  // (No eval either; the test cannot try it from here: the DevTools protocol's evaluations are exempt.)
  expect(csp).not.toMatch(/'unsafe-eval'/);
  expect(directive("connect-src")).toMatch(/^connect-src 'self' /);
  expect(directive("object-src")).toBe("object-src 'none'");
  // Workers get their policy from their own response: the same header is on every file.
  const html = await response.text();
  const entry = /src="(\/assets\/index-[^"]+\.js)"/.exec(html)![1]!;
  expect((await request.get(entry)).headers()["content-security-policy"]).toBe(csp);
  expect(html).toContain('http-equiv="Content-Security-Policy"');

  await page.goto("/");
  await expect(page.getByTestId("run-status")).toHaveText("idle");
  const blocked = await page.evaluate(async () => {
    const violations: string[] = [];
    document.addEventListener("securitypolicyviolation", (e) => violations.push(`${e.effectiveDirective} ${e.blockedURI}`));
    const w = window as unknown as Record<string, unknown>;
    const script = document.createElement("script");
    script.textContent = "window.__inline = 1";
    document.body.append(script);
    const anchor = document.createElement("a");
    anchor.href = "javascript:window.__js = 1";
    document.body.append(anchor);
    anchor.click();
    const outside = await fetch("https://example.com/").then(
      () => "fetched",
      () => "refused",
    );
    // The violation reports come as events, after the refusals: waited for (not a fixed sleep), up to 10 s.
    // (Two script refusals: the inline script and the javascript: URL.)
    const reported = () => violations.filter((v) => v.startsWith("script-src-elem inline")).length >= 2 && violations.some((v) => v.startsWith("connect-src https://example.com"));
    for (const end = Date.now() + 10_000; !reported() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    return { inline: w.__inline, js: w.__js, outside, violations };
  });
  expect(blocked.inline).toBeUndefined();
  expect(blocked.js).toBeUndefined();
  expect(blocked.outside).toBe("refused");
  expect(blocked.violations).toEqual(expect.arrayContaining([expect.stringMatching(/^script-src-elem inline/), expect.stringMatching(/^connect-src https:\/\/example.com/)]));
  // The refusals are logged as console errors: expected here, and only here.
  guard.consoleErrors.splice(0, guard.consoleErrors.length, ...guard.consoleErrors.filter((m) => !/Content Security Policy|Refused to|Failed to fetch|ERR_/.test(m)));
  // Nothing reached example.com: the policy refused it before the test's network guard saw it.
  expect(guard.outside).toEqual([]);

  // And under that policy the lab still does its work: the built-in model runs (WASM, workers, blobs).
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 60_000 });
});

const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script><a href="javascript:window.__pwned=3">x</a>';

/** Nothing ran, and nothing of the hostile text became an element: only text. */
async function expectInert(page: import("@playwright/test").Page) {
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  await expect(page.locator("body img, body script, body a[href^='javascript']")).toHaveCount(0);
}

/** Each sample's transcript, token view and environment view, so that every view draws the hostile text. */
async function visitViews(page: import("@playwright/test").Page) {
  for (const sample of [0, 1]) {
    await page.getByTestId("sample-row").nth(sample).click();
    await page.getByTestId("turn").first().click();
    for (const tab of ["Tokens", "Environment", "Transcript"]) {
      const control = page.getByRole("tab", { name: tab });
      if (await control.count()) await control.click();
    }
  }
}

test("hostile text from an environment and from imported files is shown as text in every view, and never runs", async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto("/");
  // An environment whose title, description, observations, state, view and errors are all hostile text.
  const module = `
const H = ${JSON.stringify(HOSTILE)};
export default {
  name: "hostile_env",
  title: "Hostile " + H,
  description: "described as " + H,
  create() {
    return {
      step(logs, metadata) {
        if (metadata.some((m) => m.n === 1)) throw new Error("failed with " + H);
        return { observations: logs.map(() => ({ role: "environment", content: "<environment>" + H + "</environment>" })),
          metadata: metadata.map((m) => ({ ...m, note: H })), next_stop_strings: [[H]], rewards: logs.map(() => 1),
          terminateds: logs.map(() => false), answers: null };
      },
    };
  },
  view(metadata) {
    return { kind: "steps", title: H, problem: H, steps: [{ label: H, value: H }], caption: H };
  },
  generateDataset({ size, taskName }) {
    return Array.from({ length: size }, (_, n) => ({ task_name: taskName, message_log: [{ role: "user", content: H }], extra_env_info: { n, note: H }, stop_strings: [H] }));
  },
};`;
  await page.getByLabel("Environment module file").setInputFiles({ name: "hostile_env.js", mimeType: "text/javascript", buffer: Buffer.from(module) });
  await expect(page.locator('[data-testid="user-environment"][data-name="hostile_env"]')).toHaveAttribute("data-status", "ready");
  await expect(page.locator('[data-testid="user-environment"][data-name="hostile_env"]')).toContainText("<script>");
  await page.getByLabel("Environment", { exact: true }).selectOption("hostile_env");
  await page.getByLabel("Samples").fill("2");
  await page.getByLabel("Mode", { exact: true }).selectOption("async");
  await page.getByLabel("max_rollout_turns").fill("2");
  await page.getByLabel("Policy", { exact: true }).selectOption("scripted");
  await page.getByLabel("Scripted responses").fill(JSON.stringify([[HOSTILE, `${HOSTILE}<think>${HOSTILE}</think>`], [HOSTILE]]));
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 30_000 });
  await expect(page.getByTestId("transcript")).toContainText("<environment><img src=x onerror=");
  await visitViews(page);
  await expect(page.getByTestId("termination").nth(1)).toContainText("failed with <img src=x");
  await expectInert(page);

  // A run export whose name and content are hostile, with a bad line: the problems panel, the import, the saved
  // runs, the overview, the metrics and the comparison.
  const line = (idx: number) =>
    JSON.stringify({
      idx,
      task_name: HOSTILE,
      message_log: [
        { role: "user", content: HOSTILE },
        { role: "assistant", content: `${HOSTILE}<tool_call>{"name": "x", "arguments": {"a": ${JSON.stringify(HOSTILE)}}}</tool_call>` },
        { role: "environment", content: HOSTILE },
      ],
      extra_env_info: { note: HOSTILE },
      total_reward: idx,
      termination: "terminated",
      error: HOSTILE,
    });
  const text = [line(0), `{"idx": 1, "task_name": ${JSON.stringify(HOSTILE)}, "message_log": 5}`, HOSTILE, line(3)].join("\n");
  await page.getByLabel("Import JSONL", { exact: false }).first().setInputFiles({ name: `${HOSTILE}.jsonl`, mimeType: "application/x-ndjson", buffer: Buffer.from(text) });
  await expect(page.getByTestId("import-problems")).toContainText("<img src=x");
  await expectInert(page);
  await page.getByTestId("import-valid-anyway").click();
  await expect(page.getByTestId("sample-row")).toHaveCount(2);
  await visitViews(page);
  await expect(page.getByTestId("transcript")).toContainText("<script>window.__pwned=2</script>");
  await page.getByText(/Saved runs/).click();
  await expect(page.getByTestId("saved-runs")).toContainText("2 samples");
  const compare = page.getByRole("tab", { name: "Compare" });
  if (await compare.count()) await compare.click();
  await expectInert(page);
});

test("an imported run whose scenario reaches other hosts: they are listed beside Run before anything contacts them; the page's own scenarios list none", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("run-contacts")).toHaveCount(0);
  const scenario = {
    mode: "sync",
    max_seq_len: 256,
    max_rollout_turns: 1,
    envs: { t: { env: "http", config: { url: "http://127.0.0.1:9/env" } } },
    samples: [{ task_name: "t", message_log: [{ role: "user", content: "question" }] }],
    policy: { kind: "server", base_url: "http://10.0.0.5:8000/v1", model: "builtin:small" },
  };
  const sample = { idx: 0, task_name: "t", message_log: [{ role: "user", content: "question" }, { role: "assistant", content: "answer" }], total_reward: 0, termination: "terminated" };
  const footer = { "lab/format": "rollout-lab-run/1", mode: "sync", max_rollout_turns: 1, max_seq_len: 256, partial: false, metrics: {}, scenario };
  const jsonl = [JSON.stringify(sample), JSON.stringify(footer)].join("\n");
  await page.getByLabel("Import JSONL").setInputFiles({ name: "far.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(jsonl) });
  await expect(page.getByTestId("sample-row")).toHaveCount(1);
  // Run again would run the file's scenario: its hosts are in view first (the test's guard fails it on any request).
  await expect(page.getByTestId("run-contact")).toHaveText([
    "http://127.0.0.1:9 — remote environment 't' (http://127.0.0.1:9/env): its dataset, every step and, after the run, its samples (for its metrics) are sent there",
    "http://10.0.0.5:8000 — inference server (http://10.0.0.5:8000/v1): every prompt of the run, as token ids, is sent there for model 'builtin:small' to continue",
  ]);
  // A preset of the page's own environments and policies reaches nothing else.
  await page.getByLabel("Preset").selectOption({ label: "Calculator · scripted · sync" });
  await expect(page.getByTestId("run-contacts")).toHaveCount(0);
});
