/**
 * An environment served over a message port: the host side (in the Worker that imported a user's module) and the
 * client side (in the rollout worker and the page), which looks like any other `EnvironmentDefinition` whose
 * calls answer with promises. Failures come back as errors carrying the module's own stack.
 */

import {
  fromWireError,
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
  | { method: "dataset"; request: DatasetRequest }
  | { method: "view"; metadata: Metadata };

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
        instances.set(id, await env.create(call.config));
        return id;
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
  const pending = new PendingCalls<unknown>();
  port.onmessage = ({ data }) => {
    const reply = data as Reply;
    if (reply.ok) pending.resolve(reply.id, reply.value);
    else {
      const error = fromWireError(reply.error);
      // The lab shows the message: it carries the module's own stack (file and line).
      error.message = withStack(reply.error.message, reply.error.stack);
      pending.reject(reply.id, error);
    }
  };
  const call = <T>(message: Call, signal?: AbortSignal): Promise<T> => {
    const { id, promise } = pending.open(undefined);
    port.postMessage({ id, ...message } satisfies Request);
    // The caller's deadline passed: the host's step sees its signal aborted, with the same reason.
    signal?.addEventListener("abort", () => port.postMessage({ id, method: "abort", reason: String((signal.reason as Error | undefined)?.message ?? signal.reason) } satisfies Request), { once: true });
    return promise as Promise<T>;
  };

  return {
    name: described.name,
    title: described.title,
    description: described.description,
    defaultTaskName: described.defaultTaskName,
    async create(config) {
      const instance = await call<number>({ method: "create", config });
      return {
        step: (messageLogBatch, metadata, context) =>
          call<EnvironmentReturn>({ method: "step", instance, messageLogBatch, metadata, ...(context?.timeoutMs !== undefined ? { timeoutMs: context.timeoutMs } : {}) }, context?.signal),
      };
    },
    generateDataset: (request) => call<DatasetDatum[]>({ method: "dataset", request }),
    ...(described.hasView ? { view: (metadata: Metadata) => call<EnvView>({ method: "view", metadata }) } : {}),
  };
}

/** The module's stack names its own file and line: keep it in the message the lab shows. */
function withStack(message: string, stack: string): string {
  if (!stack) return message;
  return stack.includes(message) ? stack : `${message}\n${stack}`;
}
