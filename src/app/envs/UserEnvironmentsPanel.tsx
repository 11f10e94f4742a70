/**
 * "Your environments": the user's environment modules (this checkout's `environments/`, a picked file, a URL),
 * each with its state, its version (number, load time, fingerprint, changed or not) and, when it failed, its error
 * and stack; the modules kept in this browser from an earlier visit, to load again or forget; and loading new ones.
 * Module text and errors are shown as text.
 */

import { useState } from "react";
import { changeOf, versionParts, type ModuleVersion } from "./module-version.js";
import { useUserEnvironments, type UserEnvironment } from "./user-environments.js";
import "./envs.css";

export function UserEnvironmentsPanel({ onLoaded }: { onLoaded(name: string, taskName: string): void }) {
  const environments = useUserEnvironments((s) => s.environments);
  const kept = useUserEnvironments((s) => s.kept);
  const storageProblem = useUserEnvironments((s) => s.storageProblem);
  const load = useUserEnvironments((s) => s.load);
  const loadUrl = useUserEnvironments((s) => s.loadUrl);
  const loadKept = useUserEnvironments((s) => s.loadKept);
  const forget = useUserEnvironments((s) => s.forget);
  const remove = useUserEnvironments((s) => s.remove);
  const [url, setUrl] = useState("");
  // Load times of another day show their date (the page's start is "today" enough).
  const [now] = useState(Date.now);
  const settled = (entry: UserEnvironment | null) => {
    if (entry?.status === "ready" && entry.description) onLoaded(entry.description.name, entry.description.defaultTaskName);
  };
  // Kept copies of modules this page has not loaded (those it has are listed above, marked as kept).
  const offered = kept.filter((k) => !environments.some((e) => e.origin === k.origin));
  const isKept = (e: UserEnvironment) => e.source !== "checkout" && kept.some((k) => k.origin === e.origin && k.version?.number === e.version?.number);
  return (
    <details
      className="user-envs wide"
      data-testid="user-environments"
      open={environments.some((e) => e.source !== "checkout" || e.status === "failed" || e.restarts !== null) || offered.length > 0 || storageProblem !== null}
    >
      <summary>Your environments ({environments.length})</summary>
      <p className="hint">
        A module that default-exports an environment (see <code>docs/environments.md</code> and the starter{" "}
        <code>environments/number_guess.js</code>). Each runs in its own Worker. Each load of a module is a new version (v1, v2, …) with the
        fingerprint of its text, so you see whether a reload picked up your change.
      </p>
      {storageProblem && (
        <p className="error env-storage-problem" role="alert" data-testid="module-storage-problem">
          {storageProblem}
        </p>
      )}
      <ul>
        {environments.map((e) => (
          <li key={e.origin} data-testid="user-environment" data-status={e.status} data-name={e.description?.name ?? ""}>
            <code>{e.origin}</code> <span className="hint">({e.source})</span>{" "}
            {e.version && <VersionLine version={e.version} now={now} />}{" "}
            {e.status === "ready" && e.description && (
              <span>
                → <strong>{e.description.title}</strong> <span className="hint">as '{e.description.name}'</span>
              </span>
            )}
            {e.status === "loading" && <span className="hint">loading…</span>}
            {isKept(e) && (
              <span className="hint env-kept" data-testid="env-kept">
                {" "}
                · kept in this browser
              </span>
            )}
            {e.source !== "checkout" && (
              <button type="button" className="link" title="Take it out of the lab and forget its kept copy" onClick={() => void remove(e.origin)}>
                remove
              </button>
            )}
            {e.restarts && (
              <p className="hint env-restarted" data-testid="env-restarted" role="status">
                Restarted {e.restarts.count === 1 ? "once" : `${e.restarts.count} times`} (last at {new Date(e.restarts.at).toLocaleTimeString()}): {e.restarts.why}
              </p>
            )}
            {e.error && (
              <pre className="env-module-error" data-testid="env-module-error">
                {errorText(e.error)}
              </pre>
            )}
          </li>
        ))}
      </ul>
      {offered.length > 0 && (
        <div className="kept-envs" data-testid="kept-environments">
          <p className="hint">
            <strong>Kept from an earlier visit.</strong> Not loaded on their own: a module's code may contact other hosts once it runs, so it
            runs only when you load it. Loading reads the copy kept in this browser (nothing is fetched, not even a URL's).
          </p>
          <ul>
            {offered.map((k) => (
              <li key={k.origin} data-testid="kept-environment" data-origin={k.origin} data-name={k.name ?? ""} data-status={k.error ? "failed" : "ready"}>
                <code>{k.origin}</code> <span className="hint">({k.source})</span> {k.version && <VersionLine version={k.version} now={now} />}{" "}
                {k.name && k.title && (
                  <span>
                    → <strong>{k.title}</strong> <span className="hint">as '{k.name}'</span>
                  </span>
                )}
                {k.error && <span className="hint">its last load failed:</span>}{" "}
                <button type="button" className="link" aria-label={`Load the kept copy of ${k.origin}`} onClick={async () => settled(await loadKept(k.origin))}>
                  load
                </button>{" "}
                <button type="button" className="link" aria-label={`Forget the kept copy of ${k.origin}`} onClick={() => void forget(k.origin)}>
                  forget
                </button>
                {k.error && (
                  <pre className="env-module-error" data-testid="env-module-error">
                    {errorText(k.error)}
                  </pre>
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
      <label className="field wide">
        <span>Load a module file (.js): it is kept in this browser and offered again after a reload</span>
        <input
          aria-label="Environment module file"
          type="file"
          accept=".js,.mjs,text/javascript"
          onChange={async (e) => {
            const file = e.target.files?.[0];
            if (!file) return;
            // Cleared first, so picking the same file again (after fixing it) loads it again.
            e.target.value = "";
            settled(await load(await file.text(), file.name, "file"));
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

/** The error's stack when it says the message, else both. */
function errorText(error: { message: string; stack: string }): string {
  return error.stack && error.stack.includes(error.message) ? error.stack : [error.message, error.stack].filter(Boolean).join("\n");
}

/** `v3 · loaded 10:42:07 · a1b2c3d4 (changed)`, each part with its test id. */
function VersionLine({ version, now }: { version: ModuleVersion; now: number }) {
  const p = versionParts(version, now);
  return (
    <span className="env-version" data-testid="env-version" data-version={version.number} data-change={changeOf(version)}>
      <strong data-testid="env-version-number">{p.number}</strong> · <span data-testid="env-version-time">{p.time}</span> ·{" "}
      <code data-testid="env-version-fingerprint" title="The first 8 hex digits of the SHA-256 of the module's text">
        {p.fingerprint}
      </code>
      {p.change && (
        <>
          {" "}
          <span className="env-version-change" data-testid="env-version-change">
            {p.change}
          </span>
        </>
      )}
    </span>
  );
}
