import { expect, test } from "./fixtures.js";

test("the built lab is served with its Content-Security-Policy, and the policy holds", async ({ page, guard, request }) => {
  const response = await request.get("/");
  const csp = response.headers()["content-security-policy"] ?? "";
  const directive = (name: string) => csp.split(";").map((d) => d.trim()).find((d) => d.startsWith(`${name} `)) ?? "";
  expect(directive("script-src")).toBe("script-src 'self' 'wasm-unsafe-eval' blob:");
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
    await new Promise((r) => setTimeout(r, 100));
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
