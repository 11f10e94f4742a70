import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import react from "@vitejs/plugin-react";
import type { Plugin } from "vite";
import { defineConfig } from "vite";
import { SANDBOX_RELAY } from "./src/app/envs/sandbox-relay.js";
import { connectSourcesFromEnv, contentSecurityPolicy } from "./src/app/security/csp.js";

// Cross-origin isolation lets onnxruntime-web use threads (SharedArrayBuffer); the static build documents the
// same headers for other hosts (README).
const isolation = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
};

// The built lab runs under a strict CSP (src/app/security/csp.ts); the dev server does not (React's refresh
// preamble is an inline script).
const csp = contentSecurityPolicy(connectSourcesFromEnv(process.env.LAB_CONNECT_SRC), [createHash("sha256").update(SANDBOX_RELAY).digest("base64")]);

/** The CSP as a <meta> in the built pages, and every header in dist/_headers (Netlify / Cloudflare Pages format). */
function securityHeaders(): Plugin {
  let outDir = "dist";
  return {
    name: "rollout-lab-security-headers",
    apply: "build",
    configResolved(config) {
      outDir = config.build.outDir;
    },
    transformIndexHtml: () => [{ tag: "meta", attrs: { "http-equiv": "Content-Security-Policy", content: csp }, injectTo: "head-prepend" }],
    closeBundle() {
      const lines = Object.entries({ ...isolation, "Content-Security-Policy": csp }).map(([k, v]) => `  ${k}: ${v}`);
      writeFileSync(join(outDir, "_headers"), `/*\n${lines.join("\n")}\n`);
    },
  };
}

export default defineConfig({
  plugins: [react(), securityHeaders()],
  // No client-side routes: a missing file must be a 404, never index.html (transformers.js probes model files).
  appType: "mpa",
  server: { headers: isolation },
  preview: { headers: { ...isolation, "Content-Security-Policy": csp } },
  build: { target: "es2022", sourcemap: true },
  worker: { format: "es" },
});
