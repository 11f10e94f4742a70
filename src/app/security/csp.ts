/**
 * The Content-Security-Policy of the built lab (served by `vite preview`, written to `dist/_headers` for static
 * hosts, and as a `<meta>` in `dist/index.html` for hosts that cannot set headers). No inline script and no
 * `eval`: only the app's own files run, plus `'wasm-unsafe-eval'` (onnxruntime-web compiles its wasm), `blob:`
 * (a user's environment module is imported from a blob in its Worker) and the inline scripts whose SHA-256 (base64)
 * the build names (the relay of the frame that starts a user module's Worker: src/app/envs/sandbox-relay.ts). Connections: the app's origin, the
 * Hugging Face hub and its file hosts, servers on this machine (a stand-in hub, a remote environment under
 * debug), and whatever hosts the build enables through `LAB_CONNECT_SRC` (space-separated sources).
 */

export const MODEL_HOSTS = ["https://huggingface.co", "https://*.huggingface.co", "https://*.hf.co"];
export const LOCAL_HOSTS = ["http://localhost:*", "http://127.0.0.1:*"];

export function contentSecurityPolicy(extraConnectSources: readonly string[] = [], inlineScriptHashes: readonly string[] = []): string {
  const directives: Record<string, string[]> = {
    "default-src": ["'self'"],
    "script-src": ["'self'", "'wasm-unsafe-eval'", "blob:", ...inlineScriptHashes.map((hash) => `'sha256-${hash}'`)],
    "worker-src": ["'self'", "blob:"],
    "connect-src": ["'self'", ...MODEL_HOSTS, ...LOCAL_HOSTS, ...extraConnectSources],
    "img-src": ["'self'", "data:", "blob:"],
    "style-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'none'"],
  };
  return Object.entries(directives)
    .map(([name, sources]) => `${name} ${sources.join(" ")}`)
    .join("; ");
}

/** `LAB_CONNECT_SRC="https://mirror.example https://env.example:8443"` → its sources, each checked. */
export function connectSourcesFromEnv(value: string | undefined): string[] {
  const sources = (value ?? "").split(/\s+/).filter(Boolean);
  for (const source of sources) {
    if (!/^(https?|wss?):\/\/[^\s;,'"]+$/.test(source)) throw new Error(`LAB_CONNECT_SRC: '${source}' is not an http(s) or ws(s) source`);
  }
  return sources;
}
