/**
 * The one script of the sandboxed frame a user module's host Worker is started from (./sandbox.ts). It runs inline
 * in an `about:srcdoc` frame, so the lab's Content-Security-Policy names its SHA-256 (vite.config.ts): keep it
 * byte for byte as the policy's hash was taken of it. Plain text, no imports: vite.config.ts reads it in Node.
 *
 * What it does, once, for the lab that embeds it: starts a classic Worker (a module Worker cannot start from a blob
 * in an opaque origin), which imports the host's code from a blob of its own and finds its line to the page in
 * `globalThis.rolloutLabHostPort`; says it did, and reports an error the host itself left unhandled (it reports a
 * module's own errors over its port, and cancels them, so none reaches the page as the page's).
 */
export const SANDBOX_RELAY = `let started = false;
addEventListener("message", (e) => {
  if (e.source !== parent || started) return;
  started = true;
  const boot = 'onmessage = (e) => { onmessage = null; const { code, port } = e.data; globalThis.rolloutLabHostPort = port;'
    + ' import(URL.createObjectURL(new Blob([code], { type: "text/javascript" })))'
    + '.catch((x) => port.postMessage({ type: "failed", message: "the environment host did not start: " + x, stack: "" })); };';
  const worker = new Worker(URL.createObjectURL(new Blob([boot], { type: "text/javascript" })));
  worker.onerror = (x) => {
    x.preventDefault();
    parent.postMessage({ type: "sandbox_failed", message: "the environment's Worker failed: " + (x.message || "(no message)") }, "*");
  };
  worker.postMessage(e.data, [e.data.port]);
  parent.postMessage({ type: "sandbox_started" }, "*");
});`;
