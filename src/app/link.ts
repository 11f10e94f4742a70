/**
 * Opening a shared link (`#scenario=…`, `&run=1`: ./share-url.ts), on the page's first load and whenever only the
 * hash changes (a second link opened in the same tab: `hashchange`).
 *
 * - The link's scenario goes into the JSON editor; a link that cannot be read, or whose scenario has problems,
 *   shows why (`useLinkState.error`) and runs nothing. Reading it never throws (whatever a parser throws is caught).
 * - `run=1` is read once: it is dropped from the address (`history.replaceState`), so reloading the tab does not
 *   run the link again.
 * - A link's run starts at once only when it reaches nothing but the page's own origin (built-in environments and
 *   this checkout's modules, the built-in models, scripted, oracle and replay policies): that is what the regression
 *   runner's links are (src/regress/browser.ts). A link that would contact other hosts (a remote environment's
 *   server, the model hub, an inference server as the policy, an environment module loaded from a URL) waits for
 *   the user, who is shown which hosts and why (`scenarioContacts`, `useLinkState.confirm`).
 * - A live run a link's run replaces is stopped and kept as Stop keeps it (../store.ts).
 */

import { create } from "zustand";
import { findEnvironment } from "../envs/index.js";
import { parseScenario, type Scenario } from "../scenario/schema.js";
import { userEnvironmentsSettled, useUserEnvironments, type UserEnvironment } from "./envs/user-environments.js";
import { readHash } from "../scenario/share-url.js";
import { scenarioContacts, type Contact } from "./security/contacts.js";
import { isLive } from "./session/run-session.js";
import { session, startRun, useLab } from "./store.js";

/** A link's run waiting for the user (it would contact `contacts`). */
export interface LinkConfirm {
  text: string;
  contacts: Contact[];
  /** The page had a live run when the link came (running the link stops it, and keeps it). */
  replacesLive: boolean;
}

/** A link whose scenario names environment modules this page has not loaded: which, and what the link asked. */
export interface LinkNeeds {
  missing: string[];
  scenario: Scenario;
  text: string;
  autorun: boolean;
}

interface LinkState {
  /** Why the last link opened cannot be used (null: none, or it was fine). */
  error: string | null;
  confirm: LinkConfirm | null;
  needs: LinkNeeds | null;
}

export const useLinkState = create<LinkState>(() => ({ error: null, confirm: null, needs: null }));

/** The environments `scenario` names that are neither built in (remote `http` included) nor among the page's loaded modules. */
export function missingEnvironments(scenario: Scenario, userEnvironments: readonly UserEnvironment[]): string[] {
  const loaded = new Set(userEnvironments.filter((e) => e.status === "ready" && e.description).map((e) => e.description!.name));
  const names = [...new Set(Object.values(scenario.envs).map((e) => e.env))];
  return names.filter((name) => !findEnvironment(name) && !loaded.has(name));
}

/**
 * A module was loaded while a link waited for it: once none is missing, the link goes on (it runs if it was to run,
 * asking first when it would reach other hosts).
 */
export function retryLinkNeeds(): void {
  const needs = useLinkState.getState().needs;
  if (!needs) return;
  const missing = missingEnvironments(needs.scenario, useUserEnvironments.getState().environments);
  if (missing.length) return useLinkState.setState({ needs: { ...needs, missing } });
  useLinkState.setState({ needs: null });
  if (needs.autorun) proceed(needs.scenario, needs.text, reading);
}

/** Runs the link waiting for the user: its scenario goes (back) into the editor and runs. */
export function confirmLinkRun(): void {
  const pending = useLinkState.getState().confirm;
  if (!pending) return;
  useLinkState.setState({ confirm: null });
  useLab.getState().form.setScenarioText(pending.text);
  startRun();
}

export function declineLinkRun(): void {
  useLinkState.setState({ confirm: null });
}

export function dismissLinkError(): void {
  useLinkState.setState({ error: null });
}

/** The address without `run=1` (the link is read once: a reload of the tab loads its scenario, but runs nothing). */
function dropRunFlag(): void {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  if (params.get("run") === null) return;
  params.delete("run");
  const hash = params.toString();
  history.replaceState(history.state, "", `${location.pathname}${location.search}${hash ? `#${hash}` : ""}`);
}

/** Each link read gets a number: a newer link (another hashchange) supersedes an older one still waiting. */
let reading = 0;

/** Reads the link in `hash` (the page's location hash): see the top of this file. Never throws. */
export async function openLink(hash: string): Promise<void> {
  const mine = ++reading;
  let link: ReturnType<typeof readHash>;
  try {
    link = readHash(hash);
  } catch (e) {
    link = { error: `the link's scenario cannot be read: ${(e as Error).message}`, autorun: false };
  }
  if (!link) return;
  if (link.autorun) dropRunFlag();
  useLinkState.setState({ error: null, confirm: null, needs: null });
  if ("error" in link) {
    useLinkState.setState({ error: link.error });
    return;
  }
  let text: string;
  let scenario: Scenario;
  try {
    text = JSON.stringify(link.scenario, null, 2);
    useLab.getState().form.setScenarioText(text);
    scenario = parseScenario(link.scenario);
  } catch (e) {
    useLinkState.setState({ error: `the link's scenario has problems (it is in the Scenario JSON editor; nothing ran):\n${(e as Error).message}` });
    return;
  }
  // Which user environments there are (this checkout's load at start) decides what the run would reach.
  await userEnvironmentsSettled();
  if (mine !== reading) return;
  // A scenario on a module this page has not loaded cannot run: the page says which, and offers to load it.
  const missing = missingEnvironments(scenario, useUserEnvironments.getState().environments);
  if (missing.length) return useLinkState.setState({ needs: { missing, scenario, text, autorun: link.autorun } });
  if (!link.autorun) return;
  proceed(scenario, text, mine);
}

/** Runs a link's scenario, asking first when it would contact hosts other than this page. */
function proceed(scenario: Scenario, text: string, mine: number): void {
  if (mine !== reading) return;
  const contacts = scenarioContacts(scenario, { origin: location.origin, hubAddress: useLab.getState().form.remoteHost, userEnvironments: useUserEnvironments.getState().environments });
  if (contacts.length === 0) {
    startRun();
    return;
  }
  useLinkState.setState({ confirm: { text, contacts, replacesLive: isLive(session.state.status) } });
}
