// ESLint (flat config): typescript-eslint's recommended rules, React's hooks rules, and the README's layout table
// ("may import") as import rules, so a module that reaches into a layer it may not use fails the lint. Tests may
// cross layers (a test drives the CLI, the page's stores, …); the code they test may not.
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

/** Each folder under src/ and the folders it may import (the README's layout table). */
const LAYERS = {
  core: [],
  envs: ["core"],
  policy: ["core"],
  scenario: ["core", "envs", "policy"],
  conformance: ["core"],
  regress: ["core", "envs", "policy", "scenario"],
  "bench-support": ["core", "envs", "policy", "scenario"],
  training: ["core", "envs", "policy", "scenario"],
  app: ["core", "envs", "policy", "scenario", "regress", "conformance"],
  cli: ["core", "envs", "policy", "scenario", "regress", "conformance", "app", "bench-support", "training"],
};
const FOLDERS = [...Object.keys(LAYERS), "faults"];

/** transformers.js and React: where each may be imported. */
const TRANSFORMERS = { group: ["@huggingface/transformers"], message: "transformers.js is imported only under src/policy/llm/." };
const REACT = { group: ["react", "react-dom", "react-dom/*", "zustand", "@tanstack/react-virtual"], message: "React and the page's UI libraries belong to src/app/." };

function layerRules(layer) {
  const forbidden = FOLDERS.filter((f) => f !== layer && !LAYERS[layer].includes(f));
  const patterns = forbidden.map((f) => ({
    group: [`**/${f}`, `**/${f}/**`],
    message: `src/${layer}/ may import ${LAYERS[layer].length ? LAYERS[layer].map((l) => `src/${l}/`).join(", ") : "nothing of ours"} (README, "Layout"); not src/${f}/.`,
  }));
  if (layer !== "app" && layer !== "cli") patterns.push(REACT);
  if (layer !== "policy" && layer !== "cli") patterns.push({ ...TRANSFORMERS, allowTypeImports: false });
  return {
    files: [`src/${layer}/**/*.{ts,tsx}`],
    ignores: ["src/**/*.test.ts", "src/**/*.fixture.ts"],
    rules: { "@typescript-eslint/no-restricted-imports": ["error", { patterns }] },
  };
}

export default tseslint.config(
  { ignores: ["dist/**", "dist.building-*/**", "node_modules/**", "public/**", "test-results/**", "playwright-report/**", "regress/out/**", "bench/results/**", ".devpack/**"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.{ts,tsx}"],
    rules: { "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }] },
  },
  {
    // React's hooks rules, the React Compiler's included (refs and values read or changed during render, state set
    // in an effect, memo dependencies): views read runs through snapshots (src/app/session/hooks.ts `useRun`).
    files: ["src/app/**/*.{ts,tsx}"],
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs.flat.recommended.rules,
      // It only says the compiler would skip a component that uses TanStack Virtual's hooks (they return mutable
      // objects); the page is not built with the React Compiler, so there is nothing to act on.
      "react-hooks/incompatible-library": "off",
    },
  },
  {
    // A test that stands in for React's own hooks (to step one by hand) is no component: the compiler's rules do
    // not apply to it; the rules of hooks still do.
    files: ["src/app/**/*.test.ts"],
    rules: { "react-hooks/immutability": "off", "react-hooks/globals": "off" },
  },
  ...Object.keys(LAYERS).map(layerRules),
  {
    // Within src/policy/, transformers.js only under llm/.
    files: ["src/policy/**/*.ts"],
    ignores: ["src/policy/llm/**", "src/**/*.test.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        { patterns: [...FOLDERS.filter((f) => f !== "policy" && f !== "core").map((f) => ({ group: [`**/${f}`, `**/${f}/**`], message: `src/policy/ may import src/core/ only; not src/${f}/.` })), REACT, TRANSFORMERS] },
      ],
    },
  },
);
