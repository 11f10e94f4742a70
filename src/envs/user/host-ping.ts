/**
 * Whether a user module's host (the page's Worker, a Node thread) still answers: after a step passed its deadline
 * unanswered, its owner pings it; a host whose event loop is free answers at once, one busy in a synchronous loop does
 * not, and is started again (src/app/envs/user-environments.ts, src/cli/module-threads.ts).
 */

/** How long a host has to answer a ping once a step passed its deadline. */
export const HOST_ANSWER_GRACE_MS = 2000;

/** The pings sent to a host and not yet answered. */
export class HostPings {
  private next = 0;
  private readonly waiting = new Map<number, () => void>();

  /** Sends a ping (`send` posts `{type: "ping", id}`); whether its pong comes within `graceMs`. */
  answers(send: (id: number) => void, graceMs = HOST_ANSWER_GRACE_MS): Promise<boolean> {
    const id = ++this.next;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(false);
      }, graceMs);
      this.waiting.set(id, () => {
        clearTimeout(timer);
        resolve(true);
      });
      send(id);
    });
  }

  /** The host's `{type: "pong", id}`. */
  pong(id: number): void {
    this.waiting.get(id)?.();
    this.waiting.delete(id);
  }
}
