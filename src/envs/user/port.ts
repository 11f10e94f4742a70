/**
 * An environment served over a message port: the host side (in the Worker that imported a user's module) and the
 * client side (in the rollout worker and the page), which looks like any other `EnvironmentDefinition` whose
 * calls answer with promises. Failures come back as errors carrying the module's own stack.
 */

import {
  fromWireError,
  LabError,
  PendingCalls,
  toWireError,
  type EnvironmentInterface,
  type EnvironmentReturn,
  type EnvMessage,
  type Metadata,
  type WireError,
} from "../../core/index.js";
import type { DatasetDatum, DatasetRequest, EnvironmentDefinition, EnvView } from "../types.js";

/** What the two ends need of a port (the DOM's `MessagePort`, Node's alike). */
export interface PortLike {
  postMessage(message: unknown): void;
  onmessage: ((event: { data: unknown }) => void) | null;
  close?(): void;
}

/** What a client knows of a served environment before it calls it. */
export interface EnvironmentDescription {
  name: string;
  title: string;
  description: string;
  defaultTaskName: string;
  hasView: boolean;
}

type Call =
  | { method: "create"; config: Record<string, unknown> }
  | { method: "step"; instance: number; messageLogBatch: EnvMessage[][]; metadata: Metadata[]; timeoutMs?: number }
  | { method: "post_process"; instance: number; batch: Record<string, unknown[]> }
  | { method: "dataset"; request: DatasetRequest }
  | { method: "view"; metadata: Metadata };

/** A created instance: its id on the host, and whether it has `globalPostProcessAndMetrics`. */
type Created = { id: number; postProcess: boolean };

type Request = ({ id: number } & Call) | { id: number; method: "abort"; reason: string };
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError };

export function describeEnvironment(env: EnvironmentDefinition): EnvironmentDescription {
  const { name, title, description, defaultTaskName } = env;
  return { name, title, description, defaultTaskName, hasView: typeof env.view === "function" };
}

/**
 * Answers calls arriving on `port` with `env`. `rewriteStack` may rename what the stack calls the module (a
 * Worker imports a picked file from a blob: URL; its stack should name the file).
 */
export function serveEnvironment(env: EnvironmentDefinition, port: PortLike, rewriteStack: (stack: string) => string = (s) => s): void {
  const instances = new Map<number, EnvironmentInterface>();
  let nextInstance = 1;
  /** The steps under way under a deadline: their signals, aborted when the caller's deadline passes. */
  const deadlines = new Map<number, AbortController>();
  const answer = async (id: number, call: Call): Promise<unknown> => {
    switch (call.method) {
      case "create": {
        const id = nextInstance++;
        const instance = await env.create(call.config);
        instances.set(id, instance);
        // Whether it has the reference's global_post_process_and_metrics: its client offers it then.
        return { id, postProcess: typeof instance.globalPostProcessAndMetrics === "function" } satisfies Created;
      }
      case "post_process": {
        const instance = instances.get(call.instance);
        if (!instance?.globalPostProcessAndMetrics) throw new Error(`no environment instance ${call.instance} with globalPostProcessAndMetrics`);
        return await instance.globalPostProcessAndMetrics(call.batch);
      }
      case "step": {
        const instance = instances.get(call.instance);
        if (!instance) throw new Error(`no environment instance ${call.instance}`);
        // The step's context, as in-process environments get it: the deadline and a signal aborted when it passes.
        if (call.timeoutMs === undefined) return await instance.step(call.messageLogBatch, call.metadata, {});
        const controller = new AbortController();
        deadlines.set(id, controller);
        try {
          return await instance.step(call.messageLogBatch, call.metadata, { timeoutMs: call.timeoutMs, signal: controller.signal });
        } finally {
          deadlines.delete(id);
        }
      }
      case "dataset":
        return await env.generateDataset(call.request);
      case "view":
        if (!env.view) throw new Error(`environment '${env.name}' has no view`);
        return await env.view(call.metadata);
    }
  };
  port.onmessage = async ({ data }) => {
    const request = data as Request;
    if (request.method === "abort") {
      deadlines.get(request.id)?.abort(new Error(request.reason));
      return;
    }
    let reply: Reply;
    try {
      reply = { id: request.id, ok: true, value: await answer(request.id, request) };
    } catch (e) {
      reply = failure(request.id, e, rewriteStack);
    }
    try {
      port.postMessage(reply);
    } catch (e) {
      // An answer that cannot cross to the other side (a function, a class instance with methods...): where it is.
      const where = reply.ok ? uncloneablePath(reply.value) : null;
      port.postMessage(failure(request.id, new Error(`its ${request.method} answer cannot be sent${where ? ` (${where} cannot be copied)` : ""}: ${(e as Error).message}`)));
    }
  };
}

/** The first place in `value` (`metadata[1].board`) that structured cloning refuses, or null. */
function uncloneablePath(value: unknown, path = "", depth = 0): string | null {
  try {
    structuredClone(value);
    return null;
  } catch {
    if (depth > 100 || typeof value !== "object" || value === null) return path || "the answer";
    for (const [key, child] of Object.entries(value)) {
      const found = uncloneablePath(child, Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key, depth + 1);
      if (found) return found;
    }
    return path || "the answer";
  }
}

function failure(id: number, e: unknown, rewriteStack: (stack: string) => string = (s) => s): Reply {
  return { id, ok: false, error: toWireError(e, rewriteStack) };
}

/** An environment whose calls go to a host on `port`. */
export function environmentOverPort(port: PortLike, described: EnvironmentDescription): EnvironmentDefinition {
  return connectEnvironment(port, described).environment;
}

/**
 * A call that was waiting on a host when it was restarted or went away: the step under way there is lost with it.
 * Its message says why the host was replaced.
 */
export class HostReplacedError extends LabError {
  override name = "HostReplacedError";
  override readonly code = "environment_host_replaced";
}

/** A client of a host whose owner (the page) may restart it: a step that never returns must not hold the rest. */
export interface PortConnection {
  environment: EnvironmentDefinition;
  /** The host answered after a step overran its deadline: the calls held meanwhile go to it. */
  resume(): void;
  /**
   * The host was restarted (the same module, loaded again): the calls waiting on the old one fail with `reason`; the
   * calls held meanwhile, and all later ones, go to `port`, where each instance is created again from its config.
   */
  replacePort(port: PortLike, reason: string): void;
  /**
   * The host ended on its own: the calls waiting on it fail with `reason` at once; later calls wait for `replacePort`
   * (or `fail`), as while a host is checked.
   */
  lost(reason: string): void;
  /** The host is gone for good: every waiting, held and later call fails with `reason`. */
  fail(reason: string): void;
}

export interface ConnectOptions {
  /**
   * A step's deadline passed and its host had not answered: whoever owns the host should find out whether it still
   * answers (a synchronous loop never does) and then call `resume`, `replacePort` or `fail`. The calls made
   * meanwhile wait, so none is sent to a host about to be stopped.
   */
  onOverdue?: () => void;
}

/** `environmentOverPort`, for the owner of the host: it can restart it under the client without losing the run. */
export function connectEnvironment(initial: PortLike, described: EnvironmentDescription, options: ConnectOptions = {}): PortConnection {
  let port = initial;
  let pending = new PendingCalls<unknown>();
  /** Bumped at each new port: instances made on an older one are made again before their next step. */
  let epoch = 0;
  let gone: Error | null = null;
  /** Set while the owner finds out whether the host still answers; settles when it knows. */
  let checking: { settled: Promise<void>; settle: () => void } | null = null;

  const listen = (to: PortLike, calls: PendingCalls<unknown>) => {
    to.onmessage = ({ data }) => {
      const reply = data as Reply;
      if (reply.ok) calls.resolve(reply.id, reply.value);
      else {
        const error = fromWireError(reply.error);
        // The lab shows the message: it carries the module's own stack (file and line).
        error.message = withStack(reply.error.message, reply.error.stack);
        calls.reject(reply.id, error);
      }
    };
  };
  listen(port, pending);

  const send = <T>(message: Call, signal?: AbortSignal): Promise<T> => {
    const calls = pending;
    const to = port;
    const { id, promise } = calls.open(undefined);
    to.postMessage({ id, ...message } satisfies Request);
    // The caller's deadline passed: the host's step sees its signal aborted, with the same reason; a host that does
    // not answer by then may be stuck, which its owner is asked to find out.
    signal?.addEventListener(
      "abort",
      () => {
        if (!calls.has(id)) return;
        to.postMessage({ id, method: "abort", reason: String((signal.reason as Error | undefined)?.message ?? signal.reason) } satisfies Request);
        if (options.onOverdue && calls === pending && !checking && !gone) {
          hold();
          options.onOverdue();
        }
      },
      { once: true },
    );
    return promise as Promise<T>;
  };

  /** Sends once the host is known to answer (or its replacement is there); `build` names the instance then. */
  const call = async <T>(build: () => Call | Promise<Call>, signal?: AbortSignal): Promise<T> => {
    while (checking) await checking.settled;
    if (gone) throw gone;
    const message = await build();
    // The caller gave up while the host was checked (its own deadline): nothing is sent.
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason));
    return send<T>(message, signal);
  };

  /** Later calls wait until the host is known to answer, or replaced. */
  const hold = () => {
    let settle = () => {};
    const settled = new Promise<void>((resolve) => (settle = resolve));
    checking = { settled, settle };
  };

  const endCheck = () => {
    const check = checking;
    checking = null;
    check?.settle();
  };

  const environment: EnvironmentDefinition = {
    name: described.name,
    title: described.title,
    description: described.description,
    defaultTaskName: described.defaultTaskName,
    async create(config) {
      // The epoch of the host the create is sent to (read when it is sent: a check may hold it across a restart).
      const made: { epoch: number; id: Promise<number> } = { epoch, id: Promise.resolve(0) };
      const first = call<Created>(() => {
        made.epoch = epoch;
        return { method: "create", config };
      });
      const { id, postProcess } = await first;
      made.id = Promise.resolve(id);
      /** The instance on the current host (made again there, from the same config, after a restart). */
      const instance = (): Promise<number> => {
        if (made.epoch !== epoch) {
          made.epoch = epoch;
          made.id = send<Created>({ method: "create", config }).then((c) => c.id);
        }
        return made.id;
      };
      return {
        ...(postProcess
          ? {
              globalPostProcessAndMetrics: (batch: Record<string, unknown[]>) =>
                call<[Record<string, unknown[]>, Record<string, number>]>(async () => ({ method: "post_process", instance: await instance(), batch })),
            }
          : {}),
        step: (messageLogBatch, metadata, context) =>
          call<EnvironmentReturn>(
            async () => ({
              method: "step",
              instance: await instance(),
              messageLogBatch,
              metadata,
              ...(context?.timeoutMs !== undefined ? { timeoutMs: context.timeoutMs } : {}),
            }),
            context?.signal,
          ),
      };
    },
    generateDataset: (request) => call<DatasetDatum[]>(() => ({ method: "dataset", request })),
    ...(described.hasView ? { view: (metadata: Metadata) => call<EnvView>(() => ({ method: "view", metadata })) } : {}),
  };

  return {
    environment,
    resume: endCheck,
    replacePort(next, reason) {
      if (gone) return;
      const old = port;
      old.onmessage = null;
      old.close?.();
      pending.rejectAll(new HostReplacedError(reason));
      port = next;
      pending = new PendingCalls<unknown>();
      epoch += 1;
      listen(port, pending);
      endCheck();
    },
    lost(reason) {
      if (gone) return;
      pending.rejectAll(new HostReplacedError(reason));
      pending = new PendingCalls<unknown>();
      listen(port, pending);
      if (!checking) hold();
    },
    fail(reason) {
      gone ??= new HostReplacedError(reason);
      pending.rejectAll(gone);
      port.onmessage = null;
      port.close?.();
      endCheck();
    },
  };
}

/** The module's stack names its own file and line: keep it in the message the lab shows. */
function withStack(message: string, stack: string): string {
  if (!stack) return message;
  return stack.includes(message) ? stack : `${message}\n${stack}`;
}
