import { test as base, expect, type Page } from "@playwright/test";

/**
 * Every test: nothing may be requested outside the app's own origin, and the page must log no error.
 * Outside requests are blocked and recorded; the test fails if there were any.
 */
export const test = base.extend<{ guard: { outside: string[]; consoleErrors: string[] } }>({
  guard: [
    async ({ page, baseURL }, use) => {
      const outside: string[] = [];
      const consoleErrors: string[] = [];
      const origin = new URL(baseURL!).origin;
      await page.route("**/*", (route) => {
        const url = route.request().url();
        if (url.startsWith(origin) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
        outside.push(url);
        return route.abort();
      });
      page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
      page.on("pageerror", (e) => consoleErrors.push(e.message));
      await use({ outside, consoleErrors });
      expect(outside, "requests outside the app's origin").toEqual([]);
      expect(consoleErrors, "console errors").toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };

export async function loadPreset(page: Page, title: string) {
  await page.getByLabel("Preset").selectOption({ label: title });
}
