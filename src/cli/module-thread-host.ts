/**
 * The thread a user environment module runs in under the Node commands (./module-threads.ts), as the page runs
 * each in a Worker: it imports the module, checks its shape and serves it on the port the main thread hands it. A
 * step stuck in a synchronous loop then holds this thread only, which the main thread can stop and start again;
 * a module that calls `process.exit` ends only this thread.
 */

import { parentPort } from "node:worker_threads";
import type { EnvironmentDefinition } from "../envs/index.js";
import { environmentFromModule } from "../envs/user/module.js";
import { describeEnvironment, serveEnvironment, type PortLike } from "../envs/user/port.js";
import type { ThreadReply, ThreadRequest } from "./module-threads.js";

const port = parentPort!;
let environment: EnvironmentDefinition | null = null;
const post = (reply: ThreadReply) => port.postMessage(reply);

port.on("message", async (request: ThreadRequest) => {
  if (request.type === "ping") return post({ type: "pong", id: request.id });
  if (request.type === "connect") {
    if (environment) serveEnvironment(environment, request.port as unknown as PortLike);
    return;
  }
  try {
    environment = environmentFromModule(await import(request.url), request.path);
    post({ type: "loaded", description: describeEnvironment(environment) });
  } catch (error) {
    const { message, stack } = error instanceof Error ? error : new Error(String(error));
    post({ type: "failed", message, stack: stack ?? "" });
  }
});

// An error the module throws outside any call (a timer, a stray promise) is reported, and the thread goes on.
process.on("uncaughtException", (e) => post({ type: "failed", message: e.message, stack: e.stack ?? "" }));
process.on("unhandledRejection", (reason) => {
  const e = reason instanceof Error ? reason : new Error(String(reason));
  post({ type: "failed", message: `unhandled rejection: ${e.message}`, stack: e.stack ?? "" });
});
