/**
 * Which hosts other than the page's own origin a scenario's run would contact, and why: what a shared link's run asks
 * the user about before it starts (../link.ts), and what the set-up shows beside Run for any scenario in the editor
 * (an imported run's, a fork's, one typed in: ../RunContacts.tsx), so no run reaches a host the user was not shown.
 */

import { DEFAULT_HUB_HOST, resolveModelSource } from "../../policy/llm/model-source.js";
import type { Scenario } from "../../scenario/schema.js";
import type { UserEnvironment } from "../envs/user-environments.js";

/** One host a scenario's run would contact, and why. */
export interface Contact {
  /** The origin contacted (`http://127.0.0.1:8765`, `https://huggingface.co`). */
  host: string;
  what: string;
}

/** The default hub's origin, as the host list shows it. */
export const DEFAULT_HUB = new URL(DEFAULT_HUB_HOST).origin;
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
export function scenarioContacts(
  scenario: Pick<Scenario, "envs" | "policy" | "tokenizer">,
  context: { origin: string; hubAddress?: string; userEnvironments?: readonly Pick<UserEnvironment, "origin" | "source" | "status" | "description">[] },
): Contact[] {
  const contacts: Contact[] = [];
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
