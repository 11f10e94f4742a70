// The unit tests' settings, over the site's Vite config (vite.config.ts stays free of vitest, which an installed
// package does not have when it builds the lab).
import { defineConfig, mergeConfig } from "vitest/config";
import site from "./vite.config.js";

export default mergeConfig(
  site,
  defineConfig({
    test: {
      include: ["src/**/*.test.ts"],
      environment: "node",
      testTimeout: 30_000,
    },
  }),
);
