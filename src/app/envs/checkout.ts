/**
 * This checkout's environments (`environments/*.js`) in the lab. Vite bundles their text; while `npm run dev`
 * runs, saving one of them re-runs this module (hot reload): changed modules load again in fresh host Workers,
 * new ones appear, deleted ones go.
 */

import { useUserEnvironments } from "./user-environments.js";

const sources = import.meta.glob("/environments/*.js", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

const loaded = new Map<string, string>((import.meta.hot?.data.loaded as Map<string, string> | undefined) ?? []);

export function syncCheckoutEnvironments(): void {
  const store = useUserEnvironments.getState();
  for (const entry of store.environments) {
    if (entry.source === "checkout" && !Object.hasOwn(sources, `/${entry.origin}`)) {
      void store.remove(entry.origin); // a checkout module has no kept copy: out of the list at once
      loaded.delete(entry.origin);
    }
  }
  for (const [path, text] of Object.entries(sources)) {
    const origin = path.slice(1);
    if (loaded.get(origin) === text) continue;
    loaded.set(origin, text);
    void store.load(text, origin, "checkout");
  }
}

syncCheckoutEnvironments();

if (import.meta.hot) {
  import.meta.hot.data.loaded = loaded;
  import.meta.hot.accept();
}
