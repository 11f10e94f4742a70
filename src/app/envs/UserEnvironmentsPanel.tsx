/**
 * "Your environments": the user's environment modules (this checkout's `environments/`, a picked file, a URL),
 * each with its state and, when it failed, its error and stack; and loading new ones.
 */

import { useState } from "react";
import { useUserEnvironments } from "./user-environments.js";

export function UserEnvironmentsPanel({ onLoaded }: { onLoaded(name: string, taskName: string): void }) {
  const environments = useUserEnvironments((s) => s.environments);
  const load = useUserEnvironments((s) => s.load);
  const loadUrl = useUserEnvironments((s) => s.loadUrl);
  const remove = useUserEnvironments((s) => s.remove);
  const [url, setUrl] = useState("");
  const settled = (entry: Awaited<ReturnType<typeof load>>) => {
    if (entry.status === "ready" && entry.description) onLoaded(entry.description.name, entry.description.defaultTaskName);
  };
  return (
    <details className="user-envs wide" data-testid="user-environments" open={environments.some((e) => e.source !== "checkout" || e.status === "failed")}>
      <summary>Your environments ({environments.length})</summary>
      <p className="hint">
        A module that default-exports an environment (see <code>docs/environments.md</code> and the starter{" "}
        <code>environments/number_guess.js</code>). Each runs in its own Worker.
      </p>
      <ul>
        {environments.map((e) => (
          <li key={e.origin} data-testid="user-environment" data-status={e.status} data-name={e.description?.name ?? ""}>
            <code>{e.origin}</code> <span className="hint">({e.source})</span>{" "}
            {e.status === "ready" && e.description && (
              <span>
                → <strong>{e.description.title}</strong> <span className="hint">as '{e.description.name}'</span>
              </span>
            )}
            {e.status === "loading" && <span className="hint">loading…</span>}
            {e.source !== "checkout" && (
              <button type="button" className="link" onClick={() => remove(e.origin)}>
                remove
              </button>
            )}
            {e.error && (
              <pre className="env-module-error" data-testid="env-module-error">
                {e.error.stack && e.error.stack.includes(e.error.message) ? e.error.stack : [e.error.message, e.error.stack].filter(Boolean).join("\n")}
              </pre>
            )}
          </li>
        ))}
      </ul>
      <label className="field wide">
        <span>Load a module file (.js)</span>
        <input
          aria-label="Environment module file"
          type="file"
          accept=".js,.mjs,text/javascript"
          onChange={async (e) => {
            const file = e.target.files?.[0];
            if (!file) return;
            settled(await load(await file.text(), file.name, "file"));
            e.target.value = "";
          }}
        />
      </label>
      <div className="field wide row">
        <input aria-label="Environment module URL" placeholder="https://…/my_env.js" value={url} onChange={(e) => setUrl(e.target.value)} />
        <button type="button" disabled={!url.trim()} onClick={async () => settled(await loadUrl(url.trim()))}>
          Load from URL
        </button>
      </div>
    </details>
  );
}
