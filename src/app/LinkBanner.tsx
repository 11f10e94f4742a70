/**
 * What the page says about a shared link it opened (./link.ts): why it cannot be used (it cannot be read, or its
 * scenario has problems), or, for a link whose run would contact other hosts, which hosts and why, with Run it /
 * Don't run. Nothing of such a link runs, and nothing is sent, before the user says so.
 */

import { useEffect } from "react";
import { confirmLinkRun, declineLinkRun, dismissLinkError, openLink, useLinkState } from "./link.js";

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
  const { error, confirm } = useLinkState();
  if (!error && !confirm) return null;
  return (
    <section className="link-banner" aria-label="Shared link">
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
