/**
 * For a shared link that needs environment modules the page has not loaded (../LinkBanner.tsx): the copies of them
 * kept in this browser, each loaded with one click (from the kept text: nothing is fetched). Once one loads, the
 * link goes on (`onLoaded`: `retryLinkNeeds`), and asks first if the module came from a URL (its code may contact
 * that host).
 */

import { useState } from "react";
import { keptCopiesFor, useUserEnvironments } from "./user-environments.js";

export function LoadKeptCopies({ names, onLoaded }: { names: readonly string[]; onLoaded(): void }) {
  const kept = useUserEnvironments((s) => s.kept);
  const environments = useUserEnvironments((s) => s.environments);
  const loadKept = useUserEnvironments((s) => s.loadKept);
  const [problem, setProblem] = useState<string | null>(null);
  const copies = keptCopiesFor(names, kept, environments);
  if (!copies.length && !problem) return null;
  return (
    <div className="row" data-testid="link-kept-copies">
      {copies.map((k) => (
        <button
          key={k.origin}
          type="button"
          onClick={async () => {
            const loaded = await loadKept(k.origin);
            setProblem(loaded?.status === "ready" ? null : `${k.origin} did not load: ${loaded?.error?.message ?? "it is no longer kept in this browser"}`);
            onLoaded();
          }}
        >
          Load the kept copy of “{k.name}” ({k.origin}
          {k.version ? `, v${k.version.number}` : ""})
        </button>
      ))}
      {problem && <pre className="error">{problem}</pre>}
    </div>
  );
}
