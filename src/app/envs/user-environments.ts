/**
 * The user's environments in the page: modules from this checkout's `environments/` folder, a file the user
 * picked, or a URL. Each runs in its own host Worker (`env-host-worker.ts`); the page keeps a client of it for
 * views, and hands each run a fresh port to it, so the rollout worker steps it like any other environment.
 *
 * Each load of an origin is its next version (./module-version.ts). A module from a file or a URL is kept in this
 * browser (./module-store.ts) with how its load went, and offered again after a reload; it is not loaded on its
 * own then (its code may contact other hosts once it runs: the host Worker can reach what the page's CSP lets it,
 * or anything where the host sets no CSP header), only when the user loads its kept copy, which fetches nothing.
 */

import { create } from "zustand";
import { environmentLookup, findEnvironment, type EnvironmentDefinition, type EnvironmentLookup } from "../../envs/index.js";
import { environmentOverPort, type EnvironmentDescription, type PortLike } from "../../envs/user/port.js";
import type { HostReply, HostRequest } from "./host-protocol.js";
import { forgetModule, keepModule, listKeptModules, type KeptModule } from "./module-store.js";
import { fingerprint, nextVersion, type ModuleVersion } from "./module-version.js";

export type ModuleSource = "checkout" | "file" | "url";

export interface UserEnvironment {
  /** The file name or URL the module came from; a module loaded again from the same origin replaces the old one. */
  origin: string;
  source: ModuleSource;
  status: "loading" | "ready" | "failed";
  description: EnvironmentDescription | null;
  /** What went wrong: at load (status failed), or later in the module outside a call. */
  error: { message: string; stack: string } | null;
  /** Bumped at each (re)load, of any module, so views of a hot-reloaded module are drawn again. */
  generation: number;
  /** Which load of its origin this is (number, time, fingerprint); null while its fingerprint is computed. */
  version: ModuleVersion | null;
}

interface Hosted {
  worker: Worker;
  /** The page's own client of the environment (its views). */
  client: EnvironmentDefinition | null;
}

interface UserEnvironmentsState {
  environments: UserEnvironment[];
  /** The modules kept in this browser (from a file or a URL), by origin, loaded in this page or not. */
  kept: KeptModule[];
  /** What the browser's storage last refused (keeping, listing or forgetting a module), in words; null: nothing. */
  storageProblem: string | null;
  load(source: string, origin: string, kind: ModuleSource): Promise<UserEnvironment>;
  loadUrl(url: string): Promise<UserEnvironment>;
  /**
   * Takes the module out of the page; one from a file or URL is forgotten by this browser too, first, so that once
   * the page shows it gone a reload does not offer it again.
   */
  remove(origin: string): Promise<void>;
  /** Loads the kept copy of `origin` (its text as kept: nothing is fetched); null when none is kept. */
  loadKept(origin: string): Promise<UserEnvironment | null>;
  /** Forgets the kept copy of `origin` (a module loaded from it stays in the page). */
  forget(origin: string): Promise<void>;
  /** Reads the kept modules (once at the page's start). */
  listKept(): Promise<void>;
}

const hosts = new Map<string, Hosted>();
let generation = 0;
/** The latest version of each origin loaded in this page (the next load follows it), in the order loaded. */
const versions = new Map<string, Promise<ModuleVersion>>();
/** Settles once the kept modules were listed (a first load of an origin goes on from its kept copy's version). */
let keptListed: Promise<void> = Promise.resolve();

export const useUserEnvironments = create<UserEnvironmentsState>((set, get) => {
  const put = (entry: UserEnvironment) =>
    set({ environments: [...get().environments.filter((e) => e.origin !== entry.origin), entry].sort((a, b) => a.origin.localeCompare(b.origin)) });
  const patch = (origin: string, changes: Partial<UserEnvironment>) =>
    set({ environments: get().environments.map((e) => (e.origin === origin ? { ...e, ...changes } : e)) });

  return {
    environments: [],
    kept: [],
    storageProblem: null,
    load(source, origin, kind) {
      hosts.get(origin)?.worker.terminate();
      const worker = new Worker(new URL("./env-host-worker.ts", import.meta.url), { type: "module" });
      const hosted: Hosted = { worker, client: null };
      hosts.set(origin, hosted);
      const entry: UserEnvironment = { origin, source: kind, status: "loading", description: null, error: null, generation: ++generation, version: null };
      put(entry);
      /** This load is still the origin's (not replaced by a later one, nor removed). */
      const isCurrent = () => hosts.get(origin) === hosted;
      const version = nextVersionOf(origin, kind, source);
      void version.then((v) => isCurrent() && patch(origin, { version: v }));
      const settled = new Promise<UserEnvironment>((resolve) => {
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
      return Promise.all([settled, version]).then(([done, v]) => {
        const now = get().environments.find((e) => e.origin === origin) ?? { ...done, version: v };
        // A module from a file or a URL is kept as it loaded, failed or not (its error is what a reload shows).
        if (kind !== "checkout" && isCurrent()) void keep({ ...now, version: v }, source);
        return now;
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
          version: null,
        };
        put(entry);
        return entry;
      }
      return get().load(text, url, "url");
    },
    async remove(origin) {
      const removed = get().environments.find((e) => e.origin === origin);
      hosts.get(origin)?.worker.terminate();
      hosts.delete(origin);
      // A module removed and loaded again starts again at v1.
      versions.delete(origin);
      // Forgotten (the kept copy deleted from IndexedDB) before it leaves the list: a reload right after the page
      // shows it gone does not offer it again. While it waits it is still listed, so its kept copy is not offered.
      if (removed && removed.source !== "checkout") await get().forget(origin);
      set({ environments: get().environments.filter((e) => e.origin !== origin) });
    },
    async loadKept(origin) {
      await keptListed;
      const copy = get().kept.find((k) => k.origin === origin);
      return copy ? get().load(copy.text, copy.origin, copy.source) : null;
    },
    async forget(origin) {
      if (!get().environments.some((e) => e.origin === origin)) versions.delete(origin);
      try {
        await forgetModule(origin);
        set({ kept: get().kept.filter((k) => k.origin !== origin) });
      } catch (e) {
        set({ storageProblem: `${(e as Error).message}: it is still kept, and a reload offers it again.` });
      }
    },
    listKept() {
      keptListed = (async () => {
        try {
          const kept = await listKeptModules();
          // Kept while the list was read: this page's own copies are the newer.
          const mine = new Map(get().kept.map((k) => [k.origin, k]));
          set({ kept: [...kept.filter((k) => !mine.has(k.origin)), ...mine.values()].sort((a, b) => a.origin.localeCompare(b.origin)) });
        } catch (e) {
          set({ storageProblem: `${(e as Error).message}: modules kept on an earlier visit cannot be offered.` });
        }
      })();
      return keptListed;
    },
  };

  /** Keeps a module's load in this browser; a refusal is said in the panel, and the module still works here. */
  async function keep(entry: UserEnvironment, text: string): Promise<void> {
    const record: KeptModule = {
      id: entry.origin,
      origin: entry.origin,
      source: entry.source === "url" ? "url" : "file",
      text,
      version: entry.version,
      name: entry.status === "ready" ? (entry.description?.name ?? null) : null,
      title: entry.status === "ready" ? (entry.description?.title ?? null) : null,
      error: entry.status === "failed" ? entry.error : null,
      keptAt: Date.now(),
    };
    try {
      await keepModule(record);
      set({ kept: [...get().kept.filter((k) => k.origin !== record.origin), record].sort((a, b) => a.origin.localeCompare(b.origin)), storageProblem: null });
    } catch (e) {
      set({ storageProblem: `${(e as Error).message}. ${entry.origin} works on this page, but a reload will not offer it again.` });
    }
  }
});

/** The version of this load of `origin`: after the one loaded before in this page, or else its kept copy's. */
function nextVersionOf(origin: string, kind: ModuleSource, text: string): Promise<ModuleVersion> {
  const loadedAt = Date.now();
  const before: Promise<Pick<ModuleVersion, "number" | "fingerprint"> | null> =
    versions.get(origin) ??
    (kind === "checkout" ? Promise.resolve(null) : keptListed.then(() => useUserEnvironments.getState().kept.find((k) => k.origin === origin)?.version ?? null));
  const next = Promise.all([before, fingerprint(text)]).then(([previous, print]) => nextVersion(previous, print, loadedAt));
  versions.set(origin, next);
  return next;
}

function nameClash(name: string, origin: string, environments: readonly UserEnvironment[]): string | null {
  if (findEnvironment(name)) return `environment '${name}' is built in: give yours another name`;
  const other = environments.find((e) => e.origin !== origin && e.status === "ready" && e.description?.name === name);
  return other ? `environment '${name}' is already loaded from ${other.origin}: remove that one first` : null;
}

// The page offers the modules kept on earlier visits (Node, where the store is tested, has no page).
if (typeof document !== "undefined") void useUserEnvironments.getState().listKept();

/**
 * The kept copies that would give the page the environments `names` (a shared link's missing modules): each kept
 * module whose last load succeeded as one of them, and that the page has not loaded.
 */
export function keptCopiesFor(names: readonly string[], kept: readonly KeptModule[], environments: readonly Pick<UserEnvironment, "origin">[]): KeptModule[] {
  const wanted = new Set(names);
  return kept.filter((k) => k.name !== null && !k.error && wanted.has(k.name) && !environments.some((e) => e.origin === k.origin));
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
