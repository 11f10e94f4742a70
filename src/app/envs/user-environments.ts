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
import { environmentLookup, findEnvironment, type EnvironmentLookup } from "../../envs/index.js";
import { connectEnvironment, type EnvironmentDescription, type PortConnection, type PortLike } from "../../envs/user/port.js";
import { HostPings } from "../../envs/user/host-ping.js";
import type { UserEnvironmentPort } from "../worker/protocol.js";
import type { HostReply, HostRequest } from "./host-protocol.js";
import { forgetModule, keepModule, listKeptModules, type KeptModule } from "./module-store.js";
import { fingerprint, nextVersion, type ModuleVersion } from "./module-version.js";
import { startSandboxedWorker, type HostWorker } from "./sandbox.js";
import hostWorkerUrl from "./env-host-worker.ts?worker&url";

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
  /** The times its host stopped answering and was started again (the same text: the same version), the last why. */
  restarts: { count: number; at: number; why: string } | null;
}

/** What a run stepping a host hears of it once the run's step there passed its deadline unanswered. */
export interface HostNews {
  /** The host answers (the step was slow, not stuck): the run's calls held meanwhile go to it. */
  answering(): void;
  /** The host was restarted: the run's calls go to `port` now; those waiting on the old host failed with `why`. */
  replaced(port: MessagePort, why: string): void;
  /** The host is gone for good (its module failed to load again): the run's calls fail with `why`. */
  gone(why: string): void;
}

/** A run's hold on the hosts of the user environments its scenario names. */
export interface RunEnvironments {
  /** A port to each host, for the rollout worker. */
  ports: UserEnvironmentPort[];
  /** The run's step of `name` passed its deadline unanswered: the page checks that host, restarting it if stuck. */
  overdue(name: string): void;
  /** The run ended: a host it kept alive (its module was loaded again or removed meanwhile) now ends. */
  release(): void;
}

interface Hosted {
  origin: string;
  /** The module's text: a host that stops answering is started again from it. */
  source: string;
  worker: HostWorker;
  /** The page's own connection to the environment (its views). */
  connection: PortConnection | null;
  /** The runs with a port to it, and how each hears that it was restarted. */
  runs: Set<HostNews>;
  /** Loaded again or removed: no new run gets it, and its Worker ends once the runs stepping it have. */
  retired: boolean;
  /** Its Worker was ended for good (retired, and its last run over): never started again. */
  ended: boolean;
  /** The check under way of whether it still answers. */
  check: Promise<void> | null;
  pings: HostPings;
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
      const before = hosts.get(origin);
      if (before) retire(before);
      const worker = startHostWorker(source, origin);
      const hosted: Hosted = { origin, source, worker, connection: null, runs: new Set(), retired: false, ended: false, check: null, pings: new HostPings() };
      hosts.set(origin, hosted);
      const entry: UserEnvironment = { origin, source: kind, status: "loading", description: null, error: null, generation: ++generation, version: null, restarts: null };
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
        let described = false;
        listenToHost(hosted, worker, (reply) => {
          if (!isCurrent()) return;
          if (reply.type === "failed") {
            const current = get().environments.find((x) => x.origin === origin);
            if (current?.status === "ready") patch(origin, { error: { message: reply.message, stack: reply.stack } });
            else settle({ status: "failed", error: { message: reply.message, stack: reply.stack } });
            return;
          }
          // A module is described once, when it has loaded.
          if (described) return;
          described = true;
          const clash = nameClash(reply.description.name, origin, get().environments);
          if (clash) {
            settle({ status: "failed", description: reply.description, error: { message: clash, stack: "" } });
            return;
          }
          hosted.connection = connectEnvironment(portTo(worker) as unknown as PortLike, reply.description);
          settle({ status: "ready", description: reply.description, error: null });
        });
        worker.onerror = (e) => {
          e.preventDefault();
          settle({ status: "failed", error: { message: e.message || "the environment's worker failed", stack: "" } });
        };
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
          restarts: null,
        };
        put(entry);
        return entry;
      }
      return get().load(text, url, "url");
    },
    async remove(origin) {
      const removed = get().environments.find((e) => e.origin === origin);
      const hosted = hosts.get(origin);
      hosts.delete(origin);
      if (hosted) retire(hosted);
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
  const clients = ready(environments).flatMap((e) => hosts.get(e.origin)?.connection?.environment ?? []);
  return environmentLookup(clients);
}

/**
 * For a run: a port to the host of each user environment the scenario names, kept alive for the run (a module
 * loaded again or removed meanwhile keeps its old host until the run ends), and restarted under it if a step of
 * the run leaves it stuck. `news(name)`: how the run hears what became of the host of `name`.
 */
export function connectRun(envNames: Iterable<string>, news: (name: string) => HostNews): RunEnvironments {
  const wanted = new Set(envNames);
  const held = ready()
    .filter((e) => wanted.has(e.description!.name))
    .map((e) => ({ description: e.description!, hosted: hosts.get(e.origin)!, news: news(e.description!.name) }));
  for (const h of held) h.hosted.runs.add(h.news);
  return {
    ports: held.map((h) => ({ description: h.description, port: portTo(h.hosted.worker) })),
    overdue(name) {
      const h = held.find((x) => x.description.name === name);
      if (h) void checkHost(h.hosted);
    },
    release() {
      for (const h of held) {
        h.hosted.runs.delete(h.news);
        if (h.hosted.retired && h.hosted.runs.size === 0) endHost(h.hosted, `environment '${h.description.name}' was loaded again or removed`);
      }
    },
  };
}

/** The built host's code, read once: each sandboxed host starts from it. */
let hostCode: Promise<string> | null = null;

/**
 * A host for `source`: in an opaque origin of its own (./sandbox.ts). The dev server serves the host as a module
 * that imports others by path, which a blob in an opaque origin cannot follow: there it is a plain Worker of the
 * page's origin, guarded by the host's seals alone (docs/environments.md).
 */
function startHostWorker(source: string, origin: string): HostWorker {
  let worker: HostWorker;
  if (import.meta.env.DEV) worker = plainWorker(hostWorkerUrl);
  else {
    hostCode ??= fetch(hostWorkerUrl)
      .then((r) => (r.ok ? r.text() : Promise.reject(new Error(`HTTP ${r.status} for ${hostWorkerUrl}`))))
      // A failed read is tried again by the next host, not kept.
      .catch((error: unknown) => {
        hostCode = null;
        throw error;
      });
    worker = startSandboxedWorker(hostCode);
  }
  worker.postMessage({ type: "load", source, origin } satisfies HostRequest);
  return worker;
}

function plainWorker(url: string): HostWorker {
  const worker = new Worker(url, { type: "module" });
  const host: HostWorker = { postMessage: (m, transfer = []) => worker.postMessage(m, transfer), onmessage: null, onerror: null, terminate: () => worker.terminate() };
  worker.onmessage = (e) => host.onmessage?.(e);
  worker.onerror = (e) => host.onerror?.(e);
  return host;
}

/** The host's replies but pongs (which answer `ping`), while `worker` is still the host's. */
function listenToHost(hosted: Hosted, worker: HostWorker, onReply: (reply: Exclude<HostReply, { type: "pong" }>) => void): void {
  worker.onmessage = (e: MessageEvent<HostReply>) => {
    if (hosted.worker !== worker) return;
    const reply = e.data;
    if (reply.type === "pong") {
      hosted.pings.pong(reply.id);
    } else onReply(reply);
  };
}

/** A new port served by the host in `worker`. */
function portTo(worker: HostWorker): MessagePort {
  const channel = new MessageChannel();
  worker.postMessage({ type: "connect", port: channel.port1 } satisfies HostRequest, [channel.port1]);
  return channel.port2;
}


/** Finds out whether the host still answers (one check at a time); one that does not is restarted. */
function checkHost(hosted: Hosted): Promise<void> {
  if (hosted.ended) return Promise.resolve();
  hosted.check ??= (async () => {
    const answered = await hosted.pings.answers((id) => hosted.worker.postMessage({ type: "ping", id } satisfies HostRequest));
    // Ended meanwhile (the module was loaded again or removed, and its last run is over): nothing to restart.
    if (hosted.ended) return;
    if (answered) {
      for (const run of hosted.runs) run.answering();
      return;
    }
    await restartHost(hosted);
  })().finally(() => (hosted.check = null));
  return hosted.check;
}

/**
 * Stops a host that does not answer and starts it again from the same text (the same version of the module): the
 * page's views and every run stepping it get a port to the new one; the steps waiting on the old one fail.
 */
async function restartHost(hosted: Hosted): Promise<void> {
  const name = hosted.connection?.environment.name ?? hosted.origin;
  const why = `environment '${name}' (${hosted.origin}) stopped answering after a step ran past its deadline (busy in a synchronous loop?): the lab restarted its module, and the steps that were under way in it failed`;
  hosted.worker.terminate();
  const worker = startHostWorker(hosted.source, hosted.origin);
  hosted.worker = worker;
  const isCurrent = () => hosts.get(hosted.origin) === hosted;
  const loaded = await new Promise<{ ok: true } | { ok: false; message: string }>((resolve) => {
    let started = false;
    listenToHost(hosted, worker, (reply) => {
      if (!started) {
        started = true;
        if (reply.type === "loaded" && reply.description.name === name) resolve({ ok: true });
        else resolve({ ok: false, message: reply.type === "failed" ? reply.message : `it now names itself '${reply.description.name}'` });
      } else if (reply.type === "failed" && isCurrent()) patchEntry(hosted.origin, { error: { message: reply.message, stack: reply.stack } });
    });
    worker.onerror = (e) => {
      e.preventDefault();
      if (!started) resolve({ ok: false, message: e.message || "the environment's worker failed" });
      started = true;
    };
  });
  // Ended while it started again: the new Worker goes too.
  if (hosted.ended) {
    worker.terminate();
    return;
  }
  if (!loaded.ok) {
    // Named as Node names it (src/cli/module-threads.ts); an origin that is a URL has colons of its own.
    const gone = `environment '${name}' (${hosted.origin}) could not be started again: ${loaded.message}`;
    endHost(hosted, gone);
    if (isCurrent()) patchEntry(hosted.origin, { status: "failed", error: { message: gone, stack: "" } });
    return;
  }
  hosted.connection?.replacePort(portTo(worker) as unknown as PortLike, why);
  for (const run of hosted.runs) run.replaced(portTo(worker), why);
  if (isCurrent()) {
    const entry = useUserEnvironments.getState().environments.find((e) => e.origin === hosted.origin);
    patchEntry(hosted.origin, { restarts: { count: (entry?.restarts?.count ?? 0) + 1, at: Date.now(), why }, generation: ++generation });
  }
}

/** No new run gets this host; it ends now, or when the runs stepping it have. */
function retire(hosted: Hosted): void {
  hosted.retired = true;
  if (hosted.runs.size === 0) endHost(hosted, `environment module ${hosted.origin} was loaded again or removed`);
}

function endHost(hosted: Hosted, why: string): void {
  hosted.ended = true;
  hosted.worker.terminate();
  hosted.connection?.fail(why);
  for (const run of hosted.runs) run.gone(why);
  hosted.runs.clear();
}

function patchEntry(origin: string, changes: Partial<UserEnvironment>): void {
  useUserEnvironments.setState((s) => ({ environments: s.environments.map((e) => (e.origin === origin ? { ...e, ...changes } : e)) }));
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
