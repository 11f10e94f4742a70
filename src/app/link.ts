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
 *   the user, who is shown which hosts and why (`linkContacts`, `useLinkState.confirm`).
 * - A live run a link's run replaces is stopped and kept as Stop keeps it (../store.ts).
 */

import { create } from "zustand";
import { findEnvironment } from "../envs/index.js";
import { resolveModelSource } from "../policy/llm/model-source.js";
import { parseScenario, type Scenario } from "../scenario/schema.js";
import { userEnvironmentsSettled, useUserEnvironments, type UserEnvironment } from "./envs/user-environments.js";
import { readHash } from "../scenario/share-url.js";
import { isLive } from "./session/run-session.js";
import { session, startRun, useLab } from "./store.js";

/** One host a scenario's run would contact, and why. */
export interface LinkContact {
  /** The origin contacted (`http://127.0.0.1:8765`, `https://huggingface.co`). */
  host: string;
  what: string;
}

export const DEFAULT_HUB = "https://huggingface.co";
const BUILTIN_ENVIRONMENTS = new Set(["sliding_puzzle", "calculator", "workspace"]);

const originOf = (url: string): string | null => {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.origin : null;
  } catch {
    return null;
  }
};

/**
 * The hosts other than the page's own origin that running `scenario` would contact: each remote environment's
 * server (`env: "http"`: its dataset and every step are posted there), the model hub for a hub model id (at the hub
 * address the page uses), and the origin of each environment module the scenario names that was loaded from a URL
 * (its code runs in a Worker and may make requests of its own), and a server policy's inference server (every prompt
 * goes there) with the hub for its tokenizer when that is a hub id, and the hub for the scenario's `tokenizer` (the
 * text policies' prompts are rendered with it) when that is a hub id. Built-in environments, this checkout's modules,
 * the built-in and locally picked models and tokenizers, scripted, oracle and replay policies contact nothing but
 * the page.
 */
export function linkContacts(
  scenario: Pick<Scenario, "envs" | "policy" | "tokenizer">,
  context: { origin: string; hubAddress?: string; userEnvironments?: readonly Pick<UserEnvironment, "origin" | "source" | "status" | "description">[] },
): LinkContact[] {
  const contacts: LinkContact[] = [];
  const add = (host: string | null, what: string) => {
    if (host && host !== context.origin) contacts.push({ host, what });
  };
  for (const [task, spec] of Object.entries(scenario.envs)) {
    if (BUILTIN_ENVIRONMENTS.has(spec.env)) continue;
    if (spec.env === "http") {
      const url = (spec.config as { url?: unknown } | undefined)?.url;
      // A URL that does not parse fails the run before anything is sent.
      if (typeof url === "string") add(originOf(url), `remote environment '${task}' (${url}): its dataset, every step and, after the run, its samples (for its metrics) are sent there`);
      continue;
    }
    const module = context.userEnvironments?.find((e) => e.status === "ready" && e.description?.name === spec.env);
    if (module?.source === "url") add(originOf(module.origin), `environment module '${spec.env}' (task '${task}'), loaded from ${module.origin}: it may make requests of its own`);
  }
  const fromHub = (spec: string, what: string) => {
    let source: ReturnType<typeof resolveModelSource> | null = null;
    try {
      source = resolveModelSource(spec);
    } catch {
      // An unknown built-in model fails before loading anything.
    }
    if (source?.kind === "hub") {
      const hub = context.hubAddress?.trim() || DEFAULT_HUB;
      add(originOf(hub) ?? hub, `${what} '${source.id}' from the hub at ${hub}${hub === DEFAULT_HUB ? " (and its file hosts)" : ""}`);
    }
  };
  if (scenario.policy.kind === "model") fromHub(scenario.policy.model, "model");
  if (scenario.policy.kind === "server") {
    const { base_url: url, model } = scenario.policy;
    add(originOf(url), `inference server (${url}): every prompt of the run, as token ids, is sent there for model '${model}' to continue`);
    // Its tokenizer (the files, no weights) comes from the hub for a hub id.
    fromHub(scenario.policy.tokenizer ?? model, "the tokenizer of");
  }
  // The text policies' tokenizer (a model or server policy's `tokenizer` key names its own, listed above).
  if (scenario.tokenizer !== undefined && scenario.policy.kind !== "model" && scenario.policy.kind !== "server") {
    fromHub(scenario.tokenizer, "the tokenizer");
  }
  // One line per host and reason; hosts in the order first named.
  const seen = new Set<string>();
  return contacts.filter((c) => {
    const key = `${c.host} ${c.what}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A link's run waiting for the user (it would contact `contacts`). */
export interface LinkConfirm {
  text: string;
  contacts: LinkContact[];
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
  const contacts = linkContacts(scenario, { origin: location.origin, hubAddress: useLab.getState().form.remoteHost, userEnvironments: useUserEnvironments.getState().environments });
  if (contacts.length === 0) {
    startRun();
    return;
  }
  useLinkState.setState({ confirm: { text, contacts, replacesLive: isLive(session.state.status) } });
}
