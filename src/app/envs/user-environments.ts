/**
 * The user's environments in the page: modules from this checkout's `environments/` folder, a file the user
 * picked, or a URL. Each runs in its own host Worker (`env-host-worker.ts`); the page keeps a client of it for
 * views, and hands each run a fresh port to it, so the rollout worker steps it like any other environment.
 */

import { create } from "zustand";
import { environmentLookup, findEnvironment, type EnvironmentDefinition, type EnvironmentLookup } from "../../envs/index.js";
import { environmentOverPort, type EnvironmentDescription, type PortLike } from "../../envs/user/port.js";
import type { HostReply, HostRequest } from "./host-protocol.js";

export type ModuleSource = "checkout" | "file" | "url";

export interface UserEnvironment {
  /** The file name or URL the module came from; a module loaded again from the same origin replaces the old one. */
  origin: string;
  source: ModuleSource;
  status: "loading" | "ready" | "failed";
  description: EnvironmentDescription | null;
  /** What went wrong: at load (status failed), or later in the module outside a call. */
  error: { message: string; stack: string } | null;
  /** Bumped at each (re)load, so views of a hot-reloaded module are drawn again. */
  generation: number;
}

interface Hosted {
  worker: Worker;
  /** The page's own client of the environment (its views). */
  client: EnvironmentDefinition | null;
}

interface UserEnvironmentsState {
  environments: UserEnvironment[];
  load(source: string, origin: string, kind: ModuleSource): Promise<UserEnvironment>;
  loadUrl(url: string): Promise<UserEnvironment>;
  remove(origin: string): void;
}

const hosts = new Map<string, Hosted>();
let generation = 0;

export const useUserEnvironments = create<UserEnvironmentsState>((set, get) => {
  const put = (entry: UserEnvironment) =>
    set({ environments: [...get().environments.filter((e) => e.origin !== entry.origin), entry].sort((a, b) => a.origin.localeCompare(b.origin)) });
  const patch = (origin: string, changes: Partial<UserEnvironment>) =>
    set({ environments: get().environments.map((e) => (e.origin === origin ? { ...e, ...changes } : e)) });

  return {
    environments: [],
    load(source, origin, kind) {
      hosts.get(origin)?.worker.terminate();
      const worker = new Worker(new URL("./env-host-worker.ts", import.meta.url), { type: "module" });
      const hosted: Hosted = { worker, client: null };
      hosts.set(origin, hosted);
      const entry: UserEnvironment = { origin, source: kind, status: "loading", description: null, error: null, generation: ++generation };
      put(entry);
      return new Promise<UserEnvironment>((resolve) => {
        const settle = (changes: Partial<UserEnvironment>) => {
          patch(origin, changes);
          resolve(get().environments.find((e) => e.origin === origin) ?? { ...entry, ...changes });
        };
        worker.onmessage = (e: MessageEvent<HostReply>) => {
          const reply = e.data;
          if (hosts.get(origin) !== hosted) return;
          if (reply.type === "failed") {
            const current = get().environments.find((x) => x.origin === origin);
            if (current?.status === "ready") patch(origin, { error: { message: reply.message, stack: reply.stack } });
            else settle({ status: "failed", error: { message: reply.message, stack: reply.stack } });
            return;
          }
          const clash = nameClash(reply.description.name, origin, get().environments);
          if (clash) {
            settle({ status: "failed", description: reply.description, error: { message: clash, stack: "" } });
            return;
          }
          const channel = new MessageChannel();
          worker.postMessage({ type: "connect", port: channel.port1 } satisfies HostRequest, [channel.port1]);
          hosted.client = environmentOverPort(channel.port2 as unknown as PortLike, reply.description);
          settle({ status: "ready", description: reply.description, error: null });
        };
        worker.onerror = (e) => {
          e.preventDefault();
          settle({ status: "failed", error: { message: e.message || "the environment's worker failed", stack: "" } });
        };
        worker.postMessage({ type: "load", source, origin } satisfies HostRequest);
      });
    },
    async loadUrl(url) {
      let text: string;
      try {
        const response = await fetch(url);
        if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
        text = await response.text();
      } catch (e) {
        const entry: UserEnvironment = {
          origin: url,
          source: "url",
          status: "failed",
          description: null,
          error: { message: `cannot fetch ${url}: ${(e as Error).message}`, stack: "" },
          generation: ++generation,
        };
        put(entry);
        return entry;
      }
      return get().load(text, url, "url");
    },
    remove(origin) {
      hosts.get(origin)?.worker.terminate();
      hosts.delete(origin);
      set({ environments: get().environments.filter((e) => e.origin !== origin) });
    },
  };
});

function nameClash(name: string, origin: string, environments: readonly UserEnvironment[]): string | null {
  if (findEnvironment(name)) return `environment '${name}' is built in: give yours another name`;
  const other = environments.find((e) => e.origin !== origin && e.status === "ready" && e.description?.name === name);
  return other ? `environment '${name}' is already loaded from ${other.origin}: remove that one first` : null;
}

const ready = (environments = useUserEnvironments.getState().environments) => environments.filter((e) => e.status === "ready" && e.description);

/** The environments the page can draw views with: the built-in ones and the ready ones of `environments`. */
export function pageEnvironmentLookup(environments = useUserEnvironments.getState().environments): EnvironmentLookup {
  const clients = ready(environments).flatMap((e) => hosts.get(e.origin)?.client ?? []);
  return environmentLookup(clients);
}

/** For a run: a fresh port to the host of each user environment the scenario names. */
export function environmentPortsFor(envNames: Iterable<string>): { description: EnvironmentDescription; port: MessagePort }[] {
  const wanted = new Set(envNames);
  return ready()
    .filter((e) => wanted.has(e.description!.name))
    .map((e) => {
      const channel = new MessageChannel();
      hosts.get(e.origin)!.worker.postMessage({ type: "connect", port: channel.port1 } satisfies HostRequest, [channel.port1]);
      return { description: e.description!, port: channel.port2 };
    });
}

/** Resolves once no user environment is still loading (a shared link may run before the checkout's have loaded). */
export function userEnvironmentsSettled(): Promise<void> {
  const loading = () => useUserEnvironments.getState().environments.some((e) => e.status === "loading");
  if (!loading()) return Promise.resolve();
  return new Promise((resolve) => {
    const unsubscribe = useUserEnvironments.subscribe(() => {
      if (loading()) return;
      unsubscribe();
      resolve();
    });
  });
}
