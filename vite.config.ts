import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// Cross-origin isolation lets onnxruntime-web use threads (SharedArrayBuffer); the static build documents the
// same headers for other hosts (README).
const isolation = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
};

export default defineConfig({
  plugins: [react()],
  // No client-side routes: a missing file must be a 404, never index.html (transformers.js probes model files).
  appType: "mpa",
  server: { headers: isolation },
  preview: { headers: isolation },
  build: { target: "es2022", sourcemap: true },
  worker: { format: "es" },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
  },
});
