/**
 * Starts a user module's host Worker in an opaque origin of its own: a Worker made by a sandboxed frame
 * (`sandbox="allow-scripts"`, no `allow-same-origin`). Whatever the host leaves within the module's reach, the
 * origin it runs in owns nothing of the lab's (no IndexedDB where kept runs and modules live, no caches, no Web
 * Locks, no storage, no channel to the lab's contexts, the lab's files only where they would be served to another
 * site) and it still falls under the page's Content-Security-Policy, which the frame inherits. The frame is one per
 * host: removing it ends its Worker, however busy.
 *
 * The page speaks to the host over a MessageChannel handed through the frame, never through the frame's window, so a
 * module that posts to its global (the frame) reaches nothing.
 */

import { SANDBOX_RELAY } from "./sandbox-relay.js";

/** What the environments' store needs of a host Worker: a plain `Worker` in the dev server, this elsewhere. */
export interface HostWorker {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  onmessage: ((e: MessageEvent) => void) | null;
  onerror: ((e: { message: string; preventDefault(): void }) => void) | null;
  terminate(): void;
}

/**
 * How long the frame's relay has to say it started the Worker once handed the host's code (a postMessage each way,
 * no module code). It says nothing only where the relay never ran: a host whose Content-Security-Policy does not name
 * the relay's hash (a policy copied from an older build's `dist/_headers`).
 */
export const RELAY_DEADLINE_MS = 10_000;

/** A host started in a sandboxed frame from `code` (the host's built module, self-contained). */
export function startSandboxedWorker(code: Promise<string>): HostWorker {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.hidden = true;
  frame.setAttribute("aria-hidden", "true");
  frame.tabIndex = -1;
  frame.srcdoc = `<!doctype html><meta charset="utf-8"><script>${SANDBOX_RELAY}</script>`;
  const channel = new MessageChannel();
  let ended = false;
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const host: HostWorker = {
    // Messages sent before the frame has started the Worker wait in the channel.
    postMessage: (message, transfer = []) => channel.port2.postMessage(message, transfer),
    onmessage: null,
    onerror: null,
    terminate() {
      if (ended) return;
      ended = true;
      clearTimeout(deadline);
      removeEventListener("message", fromFrame);
      channel.port2.close();
      frame.remove();
    },
  };
  channel.port2.onmessage = (e) => host.onmessage?.(e);
  const fail = (message: string) => {
    if (!ended) host.onerror?.({ message, preventDefault() {} });
  };
  // The frame's own word to the page: that it started the Worker, or that the Worker failed to start.
  function fromFrame(e: MessageEvent) {
    if (e.source !== frame.contentWindow || e.source === null) return;
    const data = e.data as { type?: unknown; message?: unknown };
    if (data?.type === "sandbox_started") clearTimeout(deadline);
    if (data?.type === "sandbox_failed") fail(String(data.message));
  }
  addEventListener("message", fromFrame);
  const handOver = (text: string) => {
    if (ended) return;
    deadline = setTimeout(
      () => fail(`the sandbox that starts environment modules did not answer in ${RELAY_DEADLINE_MS / 1000} s: this host's Content-Security-Policy must allow the lab's inline relay script (serve the headers of this build's dist/_headers)`),
      RELAY_DEADLINE_MS,
    );
    frame.contentWindow?.postMessage({ code: text, port: channel.port1 }, "*", [channel.port1]);
  };
  // Handled at once, not at the frame's load: a read that fails first is this host's failure, not the page's rejection.
  const read = code.then(
    (text) => ({ text }),
    (error: unknown) => ({ error: `the environment host's code could not be read: ${error instanceof Error ? error.message : String(error)}` }),
  );
  frame.addEventListener("load", () => void read.then((r) => ("text" in r ? handOver(r.text) : fail(r.error))), { once: true });
  document.documentElement.append(frame);
  return host;
}
