import { test as base, expect, type Page } from "@playwright/test";

/**
 * Every test: nothing may be requested outside the app's own origin, and the page must log no error.
 * Outside requests are blocked and recorded; the test fails if there were any.
 */
export interface Guard {
  outside: string[];
  consoleErrors: string[];
  /** Lets the page reach one more origin (a stand-in hub the test started). */
  allow(origin: string): void;
}

export const test = base.extend<{ guard: Guard }>({
  guard: [
    async ({ page, context, baseURL }, use) => {
      const outside: string[] = [];
      const consoleErrors: string[] = [];
      const allowed = new Set([new URL(baseURL!).origin]);
      // Context-wide, so requests from Workers are checked too.
      await context.route("**/*", (route) => {
        const url = route.request().url();
        if (url.startsWith("data:") || url.startsWith("blob:") || allowed.has(new URL(url).origin)) return route.continue();
        outside.push(url);
        return route.abort();
      });
      page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
      page.on("pageerror", (e) => consoleErrors.push(e.message));
      await use({ outside, consoleErrors, allow: (origin) => allowed.add(origin) });
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

/** Puts a scenario in the JSON editor (it sits in a collapsed section). */
export async function setScenario(page: Page, scenario: unknown) {
  const editor = page.getByLabel("Scenario", { exact: true });
  if (!(await editor.isVisible())) await page.getByText("Scenario JSON (what runs)").click();
  await editor.fill(typeof scenario === "string" ? scenario : JSON.stringify(scenario));
}

/** Picks a sample on a side of the Compare tab in its searchable picker: types its index, clicks its option. */
export async function pickCompareSample(page: Page, side: "A" | "B", sample: number) {
  const picker = page.getByRole("combobox", { name: `Side ${side} sample` });
  await picker.fill(String(sample));
  await page.getByRole("listbox", { name: `Side ${side} samples` }).locator(`[role="option"][data-sample="${sample}"]`).click();
  await expect(picker).toHaveAttribute("data-sample", String(sample));
}
