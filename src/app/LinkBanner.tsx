/**
 * What the page says about a shared link it opened (./link.ts): why it cannot be used (it cannot be read, or its
 * scenario has problems), or, for a link whose run would contact other hosts, which hosts and why, with Run it /
 * Don't run. Nothing of such a link runs, and nothing is sent, before the user says so.
 */

import { useEffect, useState } from "react";
import { LoadKeptCopies } from "./envs/KeptCopies.js";
import { useUserEnvironments } from "./envs/user-environments.js";
import { confirmLinkRun, declineLinkRun, dismissLinkError, openLink, retryLinkNeeds, useLinkState, type LinkNeeds } from "./link.js";

/** Reads the page's link at start, and each link opened later in the same tab (only the hash changes). */
export function useSharedLinks(): void {
  useEffect(() => {
    const read = () => void openLink(location.hash);
    read();
    window.addEventListener("hashchange", read);
    return () => window.removeEventListener("hashchange", read);
  }, []);
}

export function LinkBanner() {
  const error = useLinkState((s) => s.error);
  const confirm = useLinkState((s) => s.confirm);
  const needs = useLinkState((s) => s.needs);
  if (!error && !confirm && !needs) return null;
  return (
    <section className="link-banner" aria-label="Shared link">
      {needs && <LinkNeedsModule needs={needs} />}
      {error && (
        <div className="error" role="alert" data-testid="link-error">
          <p>{error}</p>
          <button className="link" onClick={dismissLinkError}>
            Dismiss
          </button>
        </div>
      )}
      {confirm && (
        <div className="link-confirm" role="alertdialog" aria-label="Run the link's scenario?" data-testid="link-confirm">
          <p>
            <strong>This link runs its scenario</strong>, which would contact {confirm.contacts.length === 1 ? "a host" : "hosts"} other than
            this page. Nothing has run and nothing was sent; the scenario is in the Scenario JSON editor.
          </p>
          <ul>
            {confirm.contacts.map((c, i) => (
              <li key={i} data-testid="link-contact">
                <code>{c.host}</code> — {c.what}
              </li>
            ))}
          </ul>
          {confirm.replacesLive && <p className="hint">Running it stops the run under way, which is kept among the saved runs (as Stop keeps it).</p>}
          <div className="row">
            <button onClick={confirmLinkRun}>Run it</button>
            <button className="secondary" onClick={declineLinkRun}>
              Don't run
            </button>
          </div>
        </div>
      )}
    </section>
  );
}

/** A link whose scenario runs on environment modules the page has not loaded: which, and a way to load them. */
function LinkNeedsModule({ needs }: { needs: LinkNeeds }) {
  const load = useUserEnvironments((s) => s.load);
  const [problem, setProblem] = useState<string | null>(null);
  const names = needs.missing.map((n) => `“${n}”`).join(", ");
  return (
    <div className="error" role="alert" data-testid="link-needs-module">
      <p>
        This link's scenario runs on the environment {needs.missing.length === 1 ? "module" : "modules"} {names}, which this lab has not
        loaded. Nothing ran; the scenario is in the Scenario JSON editor. Load {needs.missing.length === 1 ? "its module" : "their modules"} (the
        .js file{needs.missing.length === 1 ? "" : "s"} of the environment{needs.missing.length === 1 ? "" : "s"}){needs.autorun ? " and the link runs" : ""}.
      </p>
      <LoadKeptCopies names={needs.missing} onLoaded={retryLinkNeeds} />
      <label className="secondary file-button">
        Load the module…
        <input
          type="file"
          accept=".js,.mjs,text/javascript"
          aria-label="Load the link's environment module"
          onChange={async (e) => {
            const file = e.target.files?.[0];
            e.target.value = "";
            if (!file) return;
            const loaded = await load(await file.text(), file.name, "file");
            if (loaded.status !== "ready") setProblem(`${file.name} did not load: ${loaded.error?.message ?? "unknown error"}`);
            else setProblem(null);
            retryLinkNeeds();
          }}
        />
      </label>
      {problem && <pre className="error">{problem}</pre>}
    </div>
  );
}
