/**
 * The Node commands' user environment modules, each in a thread of its own (./module-thread-host.ts), served to
 * this one over a message port as the page serves each from a Worker (src/envs/user/port.ts). When a step passes
 * the scenario's `env_step_timeout_ms` unanswered, the thread is pinged; one that does not answer within
 * `HOST_ANSWER_GRACE_MS` (src/envs/user/host-ping.ts; busy in a synchronous loop) is terminated and started again from the same file, and the
 * run goes on with it: only the steps under way in the stuck thread fail. A thread that ends on its own (a module
 * calling `process.exit`) is started again the same way.
 */

import { Worker, type MessagePort as NodeMessagePort } from "node:worker_threads";
import { pathToFileURL } from "node:url";
import type { EnvironmentDefinition } from "../envs/index.js";
import { HostPings } from "../envs/user/host-ping.js";
import { connectEnvironment, type EnvironmentDescription, type PortConnection, type PortLike } from "../envs/user/port.js";

export type ThreadRequest =
  /** Import the module at `url`; `path` names it in errors. */
  | { type: "load"; url: string; path: string }
  /** Serve the loaded environment on this port. */
  | { type: "connect"; port: NodeMessagePort }
  /** Answer at once: a thread that does not is stuck. */
  | { type: "ping"; id: number };

export type ThreadReply =
  | { type: "loaded"; description: EnvironmentDescription }
  | { type: "failed"; message: string; stack: string }
  | { type: "pong"; id: number };

const BOOT = new URL("./module-thread.mjs", import.meta.url);

export type ThreadLoad = { ok: true; environment: EnvironmentDefinition } | { ok: false; message: string; stack: string };

/**
 * Imports the module at `path` in a thread of its own. `report` hears what happens to it later (an error outside
 * any call, a restart). The thread never keeps the process alive on its own: only while a call waits on it.
 */
export function loadInThread(path: string, report: (message: string) => void): Promise<ThreadLoad> {
  return new ModuleThread(path, report).start();
}

class ModuleThread {
  private worker: Worker | null = null;
  private connection: PortConnection | null = null;
  private name = "";
  private checking: Promise<void> | null = null;
  /** The restart under way (one at a time: a thread that exits while it is pinged is restarted once). */
  private restarting: Promise<void> | null = null;
  private readonly pings = new HostPings();

  constructor(
    private readonly path: string,
    private readonly report: (message: string) => void,
  ) {}

  async start(): Promise<ThreadLoad> {
    const reply = await this.spawn();
    if (reply.type !== "loaded") {
      const worker = this.worker;
      this.worker = null;
      void worker?.terminate();
      return { ok: false, message: reply.message, stack: reply.stack };
    }
    this.name = reply.description.name;
    this.connection = connectEnvironment(this.newPort(), reply.description, { onOverdue: () => void this.check() });
    return { ok: true, environment: this.connection.environment };
  }

  /** A new thread importing the module; settles with its first answer (loaded or failed). */
  private spawn(): Promise<Exclude<ThreadReply, { type: "pong" }>> {
    // Referenced until the module has loaded (the process waits for it), then only its ports hold the process.
    const worker = new Worker(BOOT);
    this.worker = worker;
    const current = () => this.worker === worker;
    return new Promise((resolve) => {
      let settled = false;
      const settle = (reply: Exclude<ThreadReply, { type: "pong" }>) => {
        if (settled) return false;
        settled = true;
        worker.unref();
        resolve(reply);
        return true;
      };
      worker.on("message", (reply: ThreadReply) => {
        if (!current()) return;
        if (reply.type === "pong") {
          this.pings.pong(reply.id);
        } else if (!settle(reply) && reply.type === "failed") this.report(`warning: ${this.path}: ${reply.stack || reply.message}`);
      });
      worker.on("error", (e) => {
        if (!settle({ type: "failed", message: e.message, stack: e.stack ?? "" }) && current()) this.report(`warning: ${this.path}: ${e.stack ?? e.message}`);
      });
      worker.on("exit", (code) => {
        if (settle({ type: "failed", message: `its thread ended (exit code ${code}) before the module loaded`, stack: "" }) || !current() || !this.connection) return;
        // Ended on its own (the module called process.exit): the calls waiting on it would never be answered.
        const why = `environment '${this.name}' (${this.path}) ended its thread (exit code ${code}): its module was started again, and the steps that were under way in it failed`;
        this.connection.lost(why);
        void this.restart(why);
      });
      worker.postMessage({ type: "load", url: pathToFileURL(this.path).href, path: this.path } satisfies ThreadRequest);
    });
  }

  /** A port served by the current thread, holding the process open only while a call waits on it. */
  private newPort(): PortLike {
    const { port1, port2 } = new MessageChannel() as unknown as { port1: NodeMessagePort; port2: NodeMessagePort };
    this.worker!.postMessage({ type: "connect", port: port1 } satisfies ThreadRequest, [port1]);
    return refWhileWaiting(port2);
  }

  /** Whether the thread still answers; one that does not is started again. One check at a time. */
  private check(): Promise<void> {
    this.checking ??= (async () => {
      const pinged = this.worker;
      const answered = await this.pings.answers((id) => this.worker?.postMessage({ type: "ping", id } satisfies ThreadRequest));
      // The thread ended meanwhile (its exit restarted it, and that restart answers the connection).
      if (this.worker !== pinged || this.restarting) return;
      if (answered) this.connection?.resume();
      else await this.restart(`environment '${this.name}' (${this.path}) stopped answering after a step ran past its deadline (busy in a synchronous loop?): its module was started again, and the steps that were under way in it failed`);
    })().finally(() => (this.checking = null));
    return this.checking;
  }

  private restart(why: string): Promise<void> {
    this.restarting ??= this.startAgain(why).finally(() => (this.restarting = null));
    return this.restarting;
  }

  private async startAgain(why: string): Promise<void> {
    void this.worker?.terminate();
    this.report(`warning: ${why}`);
    const reply = await this.spawn();
    if (reply.type === "loaded" && reply.description.name === this.name) {
      this.connection?.replacePort(this.newPort(), why);
      return;
    }
    // Not started again after all: its thread goes too, and every call of the module fails from now on.
    const worker = this.worker;
    this.worker = null;
    void worker?.terminate();
    const failed = `environment '${this.name}' (${this.path}) could not be started again: ${reply.type === "failed" ? reply.message : `it now names itself '${reply.description.name}'`}`;
    this.report(`warning: ${failed}`);
    this.connection?.fail(failed);
  }
}

/**
 * `port` as the port client sees it, referenced (keeping the process alive) only while a call waits for its
 * answer: from its request until its answer, or until its caller gives up on it (its abort: a step past its deadline
 * whose promise never settles must not hold the process after the run).
 */
function refWhileWaiting(port: NodeMessagePort): PortLike {
  const waiting = new Set<number>();
  let handler: ((event: { data: unknown }) => void) | null = null;
  const update = () => (waiting.size > 0 ? port.ref() : port.unref());
  const listen = (event: { data: unknown }) => {
    waiting.delete((event.data as { id: number }).id);
    update();
    handler?.(event);
  };
  return {
    postMessage(message) {
      const { id, method } = message as { id: number; method: string };
      if (method === "abort") waiting.delete(id);
      else waiting.add(id);
      update();
      port.postMessage(message);
    },
    get onmessage() {
      return handler;
    },
    set onmessage(next) {
      handler = next;
      (port as unknown as { onmessage: typeof listen | null }).onmessage = next ? listen : null;
      update();
    },
    close() {
      port.close();
    },
  };
}
