/// <reference lib="webworker" />
/**
 * The environment host: one Worker per user environment module, so a broken or hostile module cannot reach the
 * page (no DOM, no access to the model's worker), started in an opaque origin of its own (./sandbox.ts), so none of
 * the page's storage either, and sealed besides (`sealWorkerGlobals`). It imports the module's text, checks its
 * shape, and serves it on the message ports the page hands it (one for the page's views, one per run).
 */

import { environmentFromModule, type EnvironmentDefinition } from "../../envs/index.js";
import { describeEnvironment, serveEnvironment, type PortLike } from "../../envs/user/port.js";
import type { HostReply, HostRequest } from "./host-protocol.js";
import { locateSyntaxError } from "./syntax-error.js";

declare const self: DedicatedWorkerGlobalScope;

/**
 * What of an origin a module could reach from this Worker, removed before any module runs (the opaque origin owns
 * none of the page's; in the dev server the host shares the page's origin, and this is all that guards it): the page's
 * storage (IndexedDB, where kept runs and kept modules live; the Cache API; the origin's private file system through
 * `navigator.storage`), the page's other contexts (`BroadcastChannel`, `navigator.locks`) and fresh Workers (whose globals would have
 * all of it again), and `postMessage` (only the host speaks to the page: a module cannot pass itself off as loaded under
 * another name, nor answer the page's pings), and `close` (a host that ended itself would answer nothing, and the page
 * would not know why). Each is deleted wherever it is defined along the global's prototype chain, so no getter is left
 * to call; the module keeps `fetch` (the page's Content-Security-Policy bounds it) and everything computational.
 */
const SEALED = ["postMessage", "close", "indexedDB", "caches", "BroadcastChannel", "Worker", "SharedWorker", "webkitRequestFileSystem", "webkitRequestFileSystemSync", "webkitResolveLocalFileSystemURL"];

function sealWorkerGlobals(scope: object, sealedNavigator: object | undefined): void {
  const remove = (target: object, name: string) => {
    for (let o: object | null = target; o; o = Object.getPrototypeOf(o) as object | null) {
      if (Object.prototype.hasOwnProperty.call(o, name)) Reflect.deleteProperty(o, name);
    }
  };
  for (const name of SEALED) remove(scope, name);
  // The origin's file system, and its Web Locks (the page's kept runs hold one each: a module could steal one and
  // make another tab offer a live run as abandoned), and the origin's service workers.
  if (sealedNavigator) for (const name of ["storage", "locks", "serviceWorker"]) remove(sealedNavigator, name);
}

/**
 * The host's line to the page: the port a sandboxed frame's boot hands over (./sandbox.ts), or in the dev server,
 * where the host is a plain Worker of the page's origin, the Worker's own. Taken before any module runs, and
 * `postMessage` sealed after, so a module never holds it.
 */
interface PageLine {
  postMessage(message: unknown): void;
  addEventListener(type: "message", listener: (e: MessageEvent<HostRequest>) => void): void;
}
const handed = (globalThis as { rolloutLabHostPort?: MessagePort }).rolloutLabHostPort;
delete (globalThis as { rolloutLabHostPort?: MessagePort }).rolloutLabHostPort;
const page: PageLine = handed ?? self;
const toPage = page.postMessage.bind(page);
sealWorkerGlobals(self, self.navigator);

let environment: EnvironmentDefinition | null = null;
/** The module's blob: URL and its real name: stacks say the name. */
let moduleName = (stack: string) => stack;
const post = (reply: HostReply) => toPage(reply.type === "failed" ? { ...reply, stack: moduleName(reply.stack) } : reply);

// A listener, not `onmessage`: a module that sets `self.onmessage` adds its own after this one, replacing nothing.
page.addEventListener("message", async (e: MessageEvent<HostRequest>) => {
  // Only the page's messages: a module could dispatch one of its own (a second "load" of other code).
  if (!e.isTrusted) return;
  const request = e.data;
  if (request.type === "ping") return post({ type: "pong", id: request.id });
  if (request.type === "connect") {
    if (environment) serveEnvironment(environment, request.port as unknown as PortLike, moduleName);
    return;
  }
  const url = URL.createObjectURL(new Blob([request.source], { type: "text/javascript" }));
  // Frames of the host's own code say nothing to the module's author: keep the module's.
  moduleName = (stack) =>
    stack
      .split(url)
      .join(request.origin)
      .split("\n")
      .filter((line) => !/^\s+at /.test(line) || line.includes(request.origin))
      .join("\n");
  try {
    environment = environmentFromModule(await import(/* @vite-ignore */ url), request.origin);
    post({ type: "loaded", description: describeEnvironment(environment) });
  } catch (error) {
    const { message, stack } = error instanceof Error ? error : new Error(String(error));
    // The engine names no line for a module that does not parse: the page says where.
    const located = error instanceof SyntaxError ? locateSyntaxError(request.source, request.origin) : null;
    post({ type: "failed", message: located ? `${message} at ${located.split("\n")[0]!.split(": ")[0]}` : message, stack: located ?? stack ?? "" });
  } finally {
    // The module is imported: its code stays alive, the URL is no longer needed.
    URL.revokeObjectURL(url);
  }
});

handed?.start();

// An error the module throws outside any call (a timer, a stray promise) is reported, not lost; once, here: cancelled,
// it does not go on to the Worker's owner as an error of the page's.
self.addEventListener("error", (e) => {
  e.preventDefault();
  post({ type: "failed", message: e.message, stack: e.error?.stack ?? "" });
});
self.addEventListener("unhandledrejection", (e) => {
  e.preventDefault();
  const reason = e.reason instanceof Error ? e.reason : new Error(String(e.reason));
  post({ type: "failed", message: `unhandled rejection: ${reason.message}`, stack: reason.stack ?? "" });
});
