/**
 * Faults of the page's own keeping and sharing of runs, injected into the built lab (README, "Faults and what
 * survives them"); each test makes its own timing: runs start paused (the test hook of `?faults=1`) and are driven
 * turn by turn with Step, and every wait is for the event the test needs.
 *
 * - The storage quota: with the origin's quota at 150 KB (the DevTools protocol), a run's save aborts at commit with
 *   QuotaExceededError. The page says so, with the reason and an Export; the checkpoint stays and a reload offers
 *   it; "Show recovered run" under the same quota shows the run, says it is not saved, and keeps the checkpoint.
 * - A live run replaced (a file imported, a saved run opened, a link's run): it is stopped and kept, as Stop keeps it.
 * - Links: nested 5,000 deep, or with a wrong field, a link shows what is wrong and the page stays usable (and a
 *   reload does not blank it); a `run=1` link that would contact other hosts waits for the user, shown which; a
 *   reload does not run a link again; a second link in the same tab (hashchange) is read; a link too long to open
 *   is not made (the files are offered instead).
 * - A file (or a stored run) nested too deep for the page's views shows its error, not a blank page.
 */

import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { CDPSession, Page } from "@playwright/test";
import { expect, setScenario, test } from "./fixtures.js";

const board = { size: 2, grid: [[1, 2], [0, 3]], solution: [[1, 2], [3, 0]], empty_pos: [1, 0], commands: {} };

/**
 * Three puzzle samples with a scripted policy: sample 0 may make no move (it ends after its first turn), samples 1
 * and 2 go on. `filler` characters pad each response.
 */
const scripted = ({ turns = 6, filler = 0 } = {}) => ({
  mode: "sync",
  max_seq_len: 200_000,
  max_rollout_turns: turns,
  envs: { t: { env: "sliding_puzzle", config: {} } },
  samples: [0, 30, 30].map((max_moves) => ({
    task_name: "t",
    message_log: [{ role: "user", content: "<|im_start|>user\nSolve the puzzle.<|im_end|>\n<|im_start|>assistant\n" }],
    extra_env_info: { game_state: board, num_moves: 0, max_moves },
  })),
  policy: { kind: "scripted", responses: [0, 1, 2].map(() => Array.from({ length: turns }, () => `${"x".repeat(filler)}<action>view</action>`)) },
});

const status = (page: Page) => page.getByTestId("run-status");
const endings = (page: Page) => page.getByTestId("termination").allTextContents();
/** The test hook (`?faults=1`): from now on each run starts paused before its first turn (or, with false, no longer). */
const startPaused = (page: Page, on = true) =>
  page.evaluate((value) => (window as unknown as { __rolloutLabFaults: { startPaused(on: boolean): Promise<string> } }).__rolloutLabFaults.startPaused(value), on);

/** Starts `scenario` paused before its first turn (the test hook), then steps one turn: sample 0 ends, 1 and 2 go on. */
async function pausedAfterFirstTurn(page: Page, scenario: unknown) {
  await startPaused(page);
  await setScenario(page, scenario);
  await page.getByRole("button", { name: "Run" }).click();
  await expect(status(page)).toHaveText("paused");
  await page.getByRole("button", { name: "Step" }).click();
  await expect(page.locator('[data-testid="sample-row"][data-sample="0"] [data-testid="termination"]')).toHaveText(/terminated by the environment/, { timeout: 30_000 });
  await expect(page.locator('[data-testid="sample-row"][data-sample="1"] [data-turn]')).toHaveCount(1);
  await expect(status(page)).toHaveText("paused");
}

/** The checkpoints in this browser, read the way the page writes them (with their export's size). */
const checkpoints = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<{ finished: number; total: number; size: number }[]>((resolve, reject) => {
        const open = indexedDB.open("rollout-lab-recovery", 1);
        open.onupgradeneeded = () => open.result.createObjectStore("checkpoints", { keyPath: "id" });
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const all = open.result.transaction("checkpoints").objectStore("checkpoints").getAll();
          all.onsuccess = () => {
            const rows = all.result as { finished: number; total: number; jsonl: string | Blob }[];
            resolve(rows.map(({ finished, total, jsonl }) => ({ finished, total, size: typeof jsonl === "string" ? jsonl.length : jsonl.size })));
            open.result.close();
          };
        };
      }),
  );

const progressOf = async (page: Page) => (await checkpoints(page)).map(({ finished, total }) => ({ finished, total }));

/** The page's saved runs' titles, read from IndexedDB. */
const savedTitles = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<string[]>((resolve, reject) => {
        const open = indexedDB.open("rollout-lab", 1);
        open.onupgradeneeded = () => open.result.createObjectStore("runs", { keyPath: "id" });
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const all = open.result.transaction("runs").objectStore("runs").getAll();
          all.onsuccess = () => {
            resolve((all.result as { title: string }[]).map((r) => r.title));
            open.result.close();
          };
        };
      }),
  );

/** Lines of a downloaded JSONL file, parsed. */
async function downloaded(page: Page, click: () => Promise<void>) {
  const download = page.waitForEvent("download");
  await click();
  const lines = readFileSync((await (await download).path())!, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  return { samples: lines.filter((l) => "message_log" in l), footer: lines.at(-1)! };
}

/** The recovered runs were listed (so "none on offer" is an answer, not a page still reading its storage). */
const listed = (page: Page) => expect(page.getByTestId("recovered-runs-listed")).toHaveAttribute("data-listed", "true");

/** The origin's storage quota, through the DevTools protocol (Chromium heeds the first override of an origin only). */
async function quota(cdp: CDPSession, page: Page, bytes: number) {
  await cdp.send("Storage.overrideQuotaForOrigin", { origin: new URL(page.url()).origin, quotaSize: bytes });
}

/** What the origin's storage holds now, as the browser reports it (the page's own databases included). */
const usage = (page: Page) => page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);

/**
 * Fills the origin's storage (a database of the test's own) until it takes no more: records of halving sizes, each
 * kept if its transaction commits, down to `grain` bytes. Sized by what the browser refuses, not by `estimate()`,
 * whose figures lag behind the writes. Returns the bytes kept and the refusal that ended it.
 */
const fillToTheBrim = (page: Page, start: number, grain: number) =>
  page.evaluate(
    async ({ start, grain }) => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const open = indexedDB.open("e2e-filler", 1);
        open.onupgradeneeded = () => open.result.createObjectStore("filler", { autoIncrement: true });
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      const put = (size: number) =>
        new Promise<string>((resolve) => {
          const tx = db.transaction("filler", "readwrite");
          tx.objectStore("filler").put(new Uint8Array(size));
          tx.oncomplete = () => resolve("complete");
          tx.onabort = () => resolve(tx.error?.name ?? "abort");
        });
      let kept = 0;
      let refusal = "";
      for (let size = start; size >= grain; ) {
        const outcome = await put(size);
        if (outcome === "complete") kept += size;
        else {
          refusal = outcome;
          size = Math.floor(size / 2);
        }
      }
      db.close();
      return { kept, refusal };
    },
    { start, grain },
  );

test.describe("the storage quota", () => {
  test("a finished run whose save hits the quota: the page says so with the reason and an Export, the checkpoint stays and a reload offers it; Show recovered run under the same quota shows it, says it is not saved, keeps the checkpoint", async ({ page, guard }) => {
    test.setTimeout(120_000);
    await page.goto("/?faults=1");
    await listed(page);
    const cdp = await page.context().newCDPSession(page);
    // Room for the run's checkpoints above what a fresh profile's databases already take (~220 KB on Chromium 156).
    // (Chromium takes the first override of an origin's quota only: it is set once, before the run stores anything.)
    await quota(cdp, page, (await usage(page)) + 200_000);
    await pausedAfterFirstTurn(page, scripted());
    await expect.poll(() => progressOf(page), { timeout: 20_000 }).toEqual([{ finished: 1, total: 3 }]);
    // The rest of the quota is taken (another database of the origin) until not even 1 KB more fits: less than
    // the run's export.
    const [written] = await checkpoints(page);
    expect(written!.size).toBeGreaterThan(1_000);
    const filled = await fillToTheBrim(page, 400_000, 1_000);
    expect(filled.refusal).toBe("QuotaExceededError");
    expect(filled.kept).toBeGreaterThan(0);
    await page.getByRole("button", { name: "Stop" }).click();
    await expect(status(page)).toHaveText("finished");
    expect(await endings(page)).toEqual(["terminated by the environment", "cancelled", "cancelled"]);
    const notice = page.locator('[data-testid="keep-notice"][data-tone="error"]', { hasText: "is not saved in this browser" });
    await expect(notice).toContainText(/^The run “sync · 3 samples · .+” is not saved in this browser: the browser's storage for this site is full \(QuotaExceededError\)\. /);
    await expect(notice).toContainText(/Its last checkpoint \(1 of 3 samples finished, at .+\) is kept: a reload of the page offers it/);
    // Nothing claims it is saved, and its checkpoint is still there.
    expect(await savedTitles(page)).toEqual([]);
    await expect(page.getByText(/Saved runs/)).toHaveCount(0);
    expect(await progressOf(page)).toEqual([{ finished: 1, total: 3 }]);
    // The whole run exports from the notice.
    const exported = await downloaded(page, () => notice.getByRole("button", { name: "Export JSONL" }).click());
    expect(exported.samples.map((s) => s.termination)).toEqual(["terminated", "cancelled", "cancelled"]);

    // A reload offers the checkpoint.
    await page.reload();
    const offer = page.getByTestId("recovered-run");
    await expect(offer).toHaveCount(1);
    await expect(offer).toContainText(/^Recovered run from .+: 1 of 3 samples finished/);
    await offer.getByRole("button", { name: "Show recovered run" }).click();
    // Shown, but not saved: the page says so, and the checkpoint stays on offer.
    await expect(page.getByTestId("sample-row")).toHaveCount(3);
    const recoveredNotice = page.locator('[data-testid="keep-notice"]', { hasText: "recovered run" });
    await expect(recoveredNotice).toContainText(/^The recovered run “recovered · sync · 1 of 3 samples finished · .+” is shown but not saved in this browser: the browser's storage for this site is full \(QuotaExceededError\)\. Its checkpoint is kept/);
    expect(await savedTitles(page)).toEqual([]);
    expect(await progressOf(page)).toEqual([{ finished: 1, total: 3 }]);
    await expect(offer).toHaveCount(1);
    const fromNotice = await downloaded(page, () => recoveredNotice.getByRole("button", { name: "Export JSONL" }).click());
    expect(fromNotice.samples.map((s) => s.termination)).toEqual(["terminated", "cancelled", "cancelled"]);
    expect(fromNotice.footer.partial).toBe(true);

    // Another try, the storage still full: said again, and the checkpoint still stays. (Chromium gives room back
    // lazily, long after a delete: the try that succeeds, and the checkpoint's deletion after the save's commit, are
    // the other tests' runs that end.)
    await recoveredNotice.getByRole("button", { name: "Try saving again" }).click();
    await expect(recoveredNotice.getByTestId("keep-notice-problem")).toHaveText("still not saved: the browser's storage for this site is full (QuotaExceededError)");
    expect(await savedTitles(page)).toEqual([]);
    expect(await progressOf(page)).toEqual([{ finished: 1, total: 3 }]);
    await page.reload();
    await expect(page.getByTestId("recovered-run")).toHaveCount(1);
    // The refusals were said on the console too (expected here, and only here).
    guard.consoleErrors.splice(0, guard.consoleErrors.length, ...guard.consoleErrors.filter((m) => !/^rollout-lab: could not (save|write)/.test(m)));
  });

  test("an imported run that cannot be saved: shown, with the reason and an Export", async ({ page, guard }) => {
    await page.goto("/");
    const cdp = await page.context().newCDPSession(page);
    await quota(cdp, page, 1_000);
    const line = (idx: number) => JSON.stringify({ idx, task_name: "t", message_log: [{ role: "user", content: `question ${idx} ${"y".repeat(4000)}` }], total_reward: 1, termination: "terminated" });
    await page.getByLabel("Import JSONL").setInputFiles({ name: "big.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from([line(0), line(1)].join("\n")) });
    await expect(page.getByTestId("keep-message")).toHaveText("imported big.jsonl: 2 samples");
    const notice = page.getByTestId("keep-notice");
    await expect(notice).toContainText(/^The run “\w+ · 2 samples · .+” is shown but not saved in this browser: the browser's storage for this site is full \(QuotaExceededError\)\. Export it to keep it\./);
    const { samples } = await downloaded(page, () => notice.getByRole("button", { name: "Export JSONL" }).click());
    expect(samples.map((s) => s.idx)).toEqual([0, 1]);
    expect(await savedTitles(page)).toEqual([]);
    guard.consoleErrors.splice(0, guard.consoleErrors.length, ...guard.consoleErrors.filter((m) => !/^rollout-lab: could not save/.test(m)));
  });
});

test("the saved runs cannot be listed: the page says so (not an empty history), and lists them once it can", async ({ page }) => {
  const run = async () => {
    await setScenario(page, scripted({ turns: 1 }));
    await page.getByRole("button", { name: /Run/ }).first().click();
    await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  };
  await page.goto("/");
  await run();
  await expect(page.getByText(/Saved runs \(1\)/)).toBeVisible();
  // The browser's storage refuses to list the runs (an UnknownError, as a damaged profile gives) after a reload.
  await page.addInitScript(() => {
    const getAll = IDBObjectStore.prototype.getAll;
    IDBObjectStore.prototype.getAll = function (this: IDBObjectStore, ...args: Parameters<typeof getAll>) {
      if (this.name === "runs" && !(globalThis as { listAgain?: boolean }).listAgain) throw new DOMException("the store is damaged", "UnknownError");
      return getAll.apply(this, args);
    };
  });
  await page.reload();
  await expect(page.getByTestId("saved-runs-problem")).toHaveText(
    "could not list the saved runs: the browser's storage failed (UnknownError: the store is damaged) (the runs kept in this browser are not shown)",
  );
  await expect(page.getByText(/Saved runs/)).toHaveCount(0);
  // Once it lists again (the next run saved), the runs are there and the problem is gone.
  await page.evaluate(() => ((globalThis as { listAgain?: boolean }).listAgain = true));
  await run();
  await expect(page.getByText(/Saved runs \(2\)/)).toBeVisible();
  await expect(page.getByTestId("saved-runs-problem")).toHaveCount(0);
});

test.describe("a live run replaced is stopped and kept, as Stop keeps it", () => {
  const importLine = (idx: number) => JSON.stringify({ idx, task_name: "t", message_log: [{ role: "user", content: `imported ${idx}` }], total_reward: 1, termination: "terminated" });
  const cases: { way: string; replace(page: Page): Promise<void> }[] = [
    {
      way: "a file imported",
      replace: async (page) => {
        await page.getByLabel("Import JSONL").setInputFiles({ name: "other.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from([importLine(0), importLine(1)].join("\n")) });
        await expect(page.getByTestId("keep-message")).toHaveText("imported other.jsonl: 2 samples");
        await expect(page.getByTestId("sample-row")).toHaveCount(2);
      },
    },
    {
      way: "a saved run opened",
      replace: async (page) => {
        await page.getByText(/Saved runs/).click();
        await page.getByTestId("saved-runs").getByRole("button", { name: /^sync · 1 samples/ }).click();
        await expect(page.getByTestId("sample-row")).toHaveCount(1);
      },
    },
    {
      way: "a link's run (a second link opened in the same tab)",
      replace: async (page) => {
        await startPaused(page, false);
        await page.evaluate((hash) => (location.hash = hash), linkHash({ ...scripted({ turns: 1 }), samples: scripted().samples.slice(0, 1), policy: { kind: "scripted", responses: [["<action>view</action>"]] } }));
        await expect(status(page)).toHaveText("finished");
        await expect(page.getByTestId("sample-row")).toHaveCount(1);
      },
    },
  ];
  for (const { way, replace } of cases) {
    test(`${way}: the live run is stopped, the page says so, it is among the saved runs and nothing is left to recover`, async ({ page }) => {
      await page.goto("/?faults=1");
      // A saved run of one sample to open (and a finished run is no live one).
      await setScenario(page, { ...scripted({ turns: 1 }), samples: scripted().samples.slice(0, 1), policy: { kind: "scripted", responses: [["<action>view</action>"]] } });
      await page.getByRole("button", { name: "Run" }).click();
      await expect(status(page)).toHaveText("finished");
      await expect.poll(() => savedTitles(page)).toEqual([expect.stringMatching(/^sync · 1 samples/)]);

      await pausedAfterFirstTurn(page, scripted());
      await expect.poll(() => progressOf(page), { timeout: 20_000 }).toEqual([{ finished: 1, total: 3 }]);
      await replace(page);
      await expect(page.locator('[data-testid="keep-notice"][data-tone="info"]')).toHaveText(/^The run under way was stopped \(as Stop stops it\) and is kept among the saved runs: /);
      await expect.poll(() => savedTitles(page)).toContainEqual(expect.stringMatching(/^sync · 3 samples/));
      await expect.poll(() => checkpoints(page)).toEqual([]);

      // After a reload: nothing to recover, and the stopped run opens as Stop would have kept it.
      await page.reload();
      await listed(page);
      await expect(page.getByTestId("recovered-run")).toHaveCount(0);
      await page.getByText(/Saved runs/).click();
      await page.getByTestId("saved-runs").getByRole("button", { name: /^sync · 3 samples/ }).click();
      await expect(page.getByTestId("sample-row")).toHaveCount(3);
      expect(await endings(page)).toEqual(["terminated by the environment", "cancelled", "cancelled"]);
    });
  }
});

/** The link of a scenario, as the Share button makes it (`#scenario=<base64url>&run=1`). */
function linkHash(scenario: unknown, run = true): string {
  return `#scenario=${Buffer.from(JSON.stringify(scenario)).toString("base64url")}${run ? "&run=1" : ""}`;
}

/** A scenario's JSON with the value `x` of its first environment's config nested `depth` deep (built as text). */
function deepLink(depth: number): string {
  const text = JSON.stringify(scripted({ turns: 1 })).replace('"config":{}', `"config":{"x":${"[".repeat(depth)}0${"]".repeat(depth)}}`);
  return `#scenario=${Buffer.from(text).toString("base64url")}&run=1`;
}

test.describe("links", () => {
  test("a link nested 5,000 deep: its error names what is wrong, nothing runs, the form stays usable, and a reload does not blank the page", async ({ page }) => {
    const hash = deepLink(5000);
    expect(hash.length).toBeLessThan(20_000);
    await page.goto(`/${hash}`);
    const error = page.getByTestId("link-error");
    await expect(error).toContainText("the link's scenario cannot be read: it nests arrays and objects 5,004 levels deep (at envs.t.config.x[0][0][0][0][0][0][0][0]…), more than the 100 a scenario may have");
    await expect(status(page)).toHaveText("idle");
    // The form works: a preset loads and runs.
    await page.getByLabel("Preset").selectOption({ label: "Calculator · scripted · sync" });
    await page.getByRole("button", { name: "Run" }).click();
    await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
    // `run=1` was read once; the reload reads the link again (its error again), and runs nothing.
    expect(page.url()).not.toContain("run=1");
    await page.reload();
    await expect(page.getByTestId("link-error")).toContainText("5,004 levels deep");
    await expect(page.getByRole("button", { name: "Run" })).toBeVisible();
    await expect(status(page)).toHaveText("idle");
  });

  test("a link whose scenario has a wrong field: the error names the field, the scenario is in the editor, nothing runs", async ({ page }) => {
    const bad = { ...scripted({ turns: 1 }), policy: { kind: "scripted", responses: [["a"]], temperature: 1 } };
    await page.goto(`/${linkHash(bad)}`);
    await expect(page.getByTestId("link-error")).toContainText("the link's scenario has problems");
    await expect(page.getByTestId("link-error")).toContainText("policy.temperature: unknown key");
    await expect(status(page)).toHaveText("idle");
    await page.getByText("Scenario JSON (what runs)").click();
    expect(JSON.parse(await page.getByLabel("Scenario", { exact: true }).inputValue()).policy.temperature).toBe(1);
  });

  test("a link that would contact a remote environment waits for the user, shown the host; nothing is sent before; a reload does not run it; a second link in the same tab is read", async ({ page, guard }) => {
    const env = await startRemoteEnvironment();
    try {
      guard.allow(env.origin);
      const remote = {
        mode: "sync",
        max_seq_len: 512,
        max_rollout_turns: 1,
        envs: { t: { env: "http", config: { url: env.origin } } },
        dataset: { task_name: "t", size: 2, seed: 0 },
        policy: { kind: "scripted", responses: [["hello"], ["hello"]] },
      };
      await page.goto(`/${linkHash(remote)}`);
      const confirm = page.getByTestId("link-confirm");
      await expect(confirm.getByTestId("link-contact")).toHaveText([`${env.origin} — remote environment 't' (${env.origin}): its dataset, every step and, after the run, its samples (for its metrics) are sent there`]);
      await expect(status(page)).toHaveText("idle");
      expect(page.url()).not.toContain("run=1");
      expect(env.requests).toEqual([]);
      await confirm.getByRole("button", { name: "Don't run" }).click();
      await expect(confirm).toHaveCount(0);
      // Reloaded: the scenario is loaded again, not run, and nothing asks.
      await page.reload();
      await listed(page);
      await expect(page.getByTestId("link-confirm")).toHaveCount(0);
      await expect(status(page)).toHaveText("idle");
      expect(env.requests).toEqual([]);
      // The same link opened again in this tab (only the hash changes): read, asked, and run when confirmed.
      await page.evaluate((hash) => (location.hash = hash), linkHash(remote));
      await expect(page.getByTestId("link-contact")).toHaveCount(1);
      expect(env.requests).toEqual([]);
      await page.getByTestId("link-confirm").getByRole("button", { name: "Run it" }).click();
      await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
      expect(env.requests.filter((r) => r !== "OPTIONS")).toEqual(["POST /dataset", "POST /step", "POST /post_process"]);
    } finally {
      env.close();
    }
  });

  test("a link naming a hub model or a hub tokenizer waits for the user, shown the hub; a link of the page's own models and environments runs at once", async ({ page }) => {
    const hub = { ...scripted({ turns: 1 }), policy: { kind: "model", model: "someone/some-model", device: "wasm" } };
    await page.goto(`/${linkHash(hub)}`);
    await expect(page.getByTestId("link-contact")).toHaveText(["https://huggingface.co — model 'someone/some-model' from the hub at https://huggingface.co (and its file hosts)"]);
    await expect(status(page)).toHaveText("idle");
    // (The test's guard fails it if the page reached the hub.)
    await page.getByTestId("link-confirm").getByRole("button", { name: "Don't run" }).click();
    // A scripted policy whose prompts a hub tokenizer renders: the hub is asked about too.
    const hubTokenizer = { ...scripted({ turns: 1 }), tokenizer: "someone/some-tokenizer" };
    await page.evaluate((hash) => (location.hash = hash), linkHash(hubTokenizer));
    await expect(page.getByTestId("link-contact")).toHaveText(["https://huggingface.co — the tokenizer 'someone/some-tokenizer' from the hub at https://huggingface.co (and its file hosts)"]);
    await expect(status(page)).toHaveText("idle");
    await page.getByTestId("link-confirm").getByRole("button", { name: "Don't run" }).click();
    // The built-in model and a built-in environment: nothing to ask, it runs.
    const own = { ...scripted({ turns: 1 }), max_new_tokens: 4, greedy: true, policy: { kind: "model", model: "builtin:tiny", device: "wasm" } };
    await page.evaluate((hash) => (location.hash = hash), linkHash(own));
    await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
    await expect(page.getByTestId("link-confirm")).toHaveCount(0);
  });

  test("Share link: a link past 64 KiB is not made (nor copied), the scenario and the run are offered as files; a short one is", async ({ page }) => {
    await page.goto("/");
    const huge = { ...scripted({ turns: 1 }), policy: { kind: "scripted", responses: [["z".repeat(3_000_000)], ["a"], ["b"]] } };
    await setScenario(page, huge);
    await page.getByRole("button", { name: "Share link" }).click();
    const tooLong = page.getByTestId("share-too-long");
    await expect(tooLong).toContainText(/^This link would be 4,0\d\d,\d\d\d characters long, more than the 65,536 a link can carry safely/);
    await expect(page.getByTestId("share-link")).toHaveCount(0);
    expect(page.url()).not.toContain("#scenario=");
    const download = page.waitForEvent("download");
    await tooLong.getByRole("button", { name: "Download the scenario (JSON)" }).click();
    expect(JSON.parse(readFileSync((await (await download).path())!, "utf8")).policy.responses[0][0]).toHaveLength(3_000_000);

    await setScenario(page, scripted({ turns: 1 }));
    await page.getByRole("button", { name: "Share link" }).click();
    await expect(page.getByTestId("share-too-long")).toHaveCount(0);
    const link = await page.getByTestId("share-link").inputValue();
    expect(link).toMatch(/#scenario=[\w-]+&run=1$/);
    // This tab's address loads the scenario; it does not run it on a reload.
    expect(page.url()).toBe(link.replace(/&run=1$/, ""));
  });
});

test.describe("data the page cannot draw", () => {
  const deep = (depth: number) => `${"[".repeat(depth)}0${"]".repeat(depth)}`;
  /** An export whose first sample holds a value nested `depth` deep (under way: no termination), then a sound one. */
  const deepJsonl = (depth: number) =>
    [
      `{"idx":0,"task_name":"t","message_log":[{"role":"user","content":"deep"}],"extra_env_info":{"x":${deep(depth)}},"total_reward":0}`,
      JSON.stringify({ idx: 1, task_name: "t", message_log: [{ role: "user", content: "shallow" }], total_reward: 0, termination: "terminated" }),
    ].join("\n");

  /** Puts `record` into the page's IndexedDB store (as the page stores saved runs and checkpoints). */
  const put = (page: Page, db: string, store: string, record: unknown) =>
    page.evaluate(
      ({ db, store, record }) =>
        new Promise<void>((resolve, reject) => {
          const open = indexedDB.open(db, 1);
          open.onupgradeneeded = () => open.result.createObjectStore(store, { keyPath: "id" });
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const tx = open.result.transaction(store, "readwrite");
            tx.objectStore(store).put(record);
            tx.oncomplete = () => {
              open.result.close();
              resolve();
            };
            tx.onerror = () => reject(tx.error);
          };
        }),
      { db, store, record },
    );

  /** The page is drawn and works: a scripted preset runs. */
  async function stillWorks(page: Page) {
    await expect(page.getByRole("heading", { name: "Rollout Lab" })).toBeVisible();
    await page.getByLabel("Preset").selectOption({ label: "Calculator · scripted · sync" });
    await page.getByRole("button", { name: /Run/ }).first().click();
    await expect(status(page)).toHaveText("finished", { timeout: 30_000 });
  }

  test("a file, a saved run and a recovered checkpoint nested 5,000 deep: each read names the line that is refused, never a blank page; the page works, before and after a reload", async ({ page }) => {
    await page.goto("/");
    await page.getByLabel("Import JSONL").setInputFiles({ name: "deep.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(deepJsonl(5000)) });
    await expect(page.getByTestId("import-problems")).toContainText("deep.jsonl: 1 of 2 lines has a problem");
    await expect(page.getByTestId("import-problem")).toHaveText([/^line 1: extra_env_info\.x/]);
    await page.getByTestId("import-cancel").click();

    await put(page, "rollout-lab", "runs", { id: "deep-saved", savedAt: Date.now(), title: "deep saved run", samples: 2, meanReward: 0, jsonl: deepJsonl(5000) });
    await put(page, "rollout-lab-recovery", "checkpoints", { id: "deep-1", startedAt: Date.now() - 5000, updatedAt: Date.now(), mode: "sync", finished: 1, total: 2, jsonl: deepJsonl(5000) });
    await page.reload();
    await page.getByText(/Saved runs/).click();
    await page.getByTestId("saved-runs").getByRole("button", { name: "deep saved run", exact: true }).click();
    await expect(page.getByTestId("import-problem")).toHaveText([/^line 1: extra_env_info\.x/]);
    await page.getByTestId("import-cancel").click();

    const recovered = page.getByRole("region", { name: "Recovered runs" });
    await recovered.getByRole("button", { name: "Show recovered run" }).click();
    await expect(recovered.getByTestId("import-problem")).toHaveText([/^line 1: extra_env_info\.x/]);
    await recovered.getByRole("button", { name: "Open the 1 valid line" }).click();
    await expect(page.getByTestId("sample-row")).toHaveCount(1);
    await stillWorks(page);
    await page.reload();
    await stillWorks(page);
  });

  test("a view that throws while it draws: its error is shown in place of the views, the form stays usable, and the views come back", async ({ page, guard }) => {
    await page.goto("/?faults=1");
    await stillWorks(page);
    await page.evaluate(() => (window as unknown as { __rolloutLabFaults: { breakDrawing(w: string, m: string | null): Promise<unknown> } }).__rolloutLabFaults.breakDrawing("views", "injected: this run cannot be drawn"));
    await expect(page.getByTestId("view-error")).toContainText("Showing this run failed: injected: this run cannot be drawn");
    await expect(page.getByTestId("sample-row")).toHaveCount(0);
    // The set-up form and the controls still work beside it.
    await page.getByLabel("Samples", { exact: true }).fill("2");
    await page.getByText("Scenario JSON (what runs)").click();
    expect(JSON.parse(await page.getByLabel("Scenario", { exact: true }).inputValue()).dataset.size).toBe(2);
    await page.evaluate(() => (window as unknown as { __rolloutLabFaults: { breakDrawing(w: string, m: string | null): Promise<unknown> } }).__rolloutLabFaults.breakDrawing("views", null));
    await page.getByTestId("view-error").getByRole("button", { name: "Try again" }).click();
    await expect(page.getByTestId("sample-row").first()).toBeVisible();
    guard.consoleErrors.splice(0, guard.consoleErrors.length, ...guard.consoleErrors.filter((m) => !/injected: this run cannot be drawn|The above error occurred/.test(m)));
  });

  test("the page itself throws while it draws: its error is shown (no blank page), with a way back to the lab", async ({ page, guard }) => {
    await page.goto(`/?faults=1${linkHash(scripted({ turns: 1 }), false)}`);
    await expect(page.getByRole("button", { name: "Run" })).toBeVisible();
    await page.evaluate(() => (window as unknown as { __rolloutLabFaults: { breakDrawing(w: string, m: string | null): Promise<unknown> } }).__rolloutLabFaults.breakDrawing("page", "injected: the page cannot be drawn"));
    const error = page.getByTestId("page-error");
    await expect(error).toContainText("The lab failed: injected: the page cannot be drawn");
    await error.getByRole("button", { name: "Reload the lab without its link" }).click();
    await expect(page.getByRole("button", { name: "Run" })).toBeVisible();
    expect(new URL(page.url()).hash).toBe("");
    expect(new URL(page.url()).search).toBe("");
    guard.consoleErrors.splice(0, guard.consoleErrors.length, ...guard.consoleErrors.filter((m) => !/injected: the page cannot be drawn|The above error occurred/.test(m)));
  });
});

/** A remote environment on localhost (docs/remote-environments.md) that records the requests it gets. */
async function startRemoteEnvironment(): Promise<{ origin: string; requests: string[]; close(): void }> {
  const requests: string[] = [];
  const body = (req: IncomingMessage) =>
    new Promise<unknown>((resolve) => {
      let text = "";
      req.on("data", (d: Buffer) => (text += d.toString()));
      req.on("end", () => resolve(text ? JSON.parse(text) : null));
    });
  const server: Server = createServer(async (req, res) => {
    const path = new URL(req.url!, "http://x").pathname;
    const cors = { "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "*", "Access-Control-Allow-Methods": "GET, POST" };
    if (req.method === "OPTIONS") {
      requests.push("OPTIONS");
      return res.writeHead(204, cors).end();
    }
    requests.push(`${req.method} ${path}`);
    const json = (value: unknown) => res.writeHead(200, { ...cors, "content-type": "application/json" }).end(JSON.stringify(value));
    if (path === "/dataset") {
      const { size, task_name } = (await body(req)) as { size: number; task_name: string };
      return json({ data: Array.from({ length: size }, (_, i) => ({ task_name, message_log: [{ role: "user", content: `question ${i}` }], extra_env_info: { i } })) });
    }
    if (path === "/step") {
      const { message_log_batch } = (await body(req)) as { message_log_batch: unknown[] };
      const n = message_log_batch.length;
      return json({ observations: Array.from({ length: n }, () => ({ role: "environment", content: "ok" })), metadata: Array.from({ length: n }, () => null), next_stop_strings: null, rewards: Array.from({ length: n }, () => 1), terminateds: Array.from({ length: n }, () => true), answers: null });
    }
    res.writeHead(404, cors).end("not found");
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => server.close() };
}

test("a dataset too big for the page is refused before anything is generated, with the reason; the page runs on", async ({ page }) => {
  await page.goto("/");
  const huge = {
    mode: "sync",
    max_seq_len: 1024,
    max_rollout_turns: 2,
    envs: { sliding_puzzle_game: { env: "sliding_puzzle", config: {} } },
    dataset: { task_name: "sliding_puzzle_game", size: 1_000_000, seed: 0, config: { size: 2, shuffle_moves: 2, max_moves: 4 } },
    policy: { kind: "oracle", seed: 0, error_rate: 0 },
  };
  await setScenario(page, huge);
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await expect(status(page)).toHaveText("failed", { timeout: 30_000 });
  await expect(page.getByTestId("run-error")).toContainText("dataset.size: 1000000 samples cannot fit in this process's memory: a run in the page holds at most 32768");
  await setScenario(page, { ...huge, dataset: { ...huge.dataset, size: 3 } });
  await page.getByRole("button", { name: "Run again", exact: true }).click();
  await expect(status(page)).toHaveText("finished", { timeout: 60_000 });
});
