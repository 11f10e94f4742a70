/** The messages between the page and an environment host Worker. */

import type { EnvironmentDescription } from "../../envs/user/port.js";

export type HostRequest =
  /** Import this module text; `origin` (a file name or URL) names it in errors. */
  | { type: "load"; source: string; origin: string }
  /** Serve the loaded environment on this port. */
  | { type: "connect"; port: MessagePort }
  /** Answer at once: a host that does not (busy in a synchronous loop) is restarted. */
  | { type: "ping"; id: number };

export type HostReply =
  | { type: "loaded"; description: EnvironmentDescription }
  | { type: "failed"; message: string; stack: string }
  | { type: "pong"; id: number };
