import { useMemo } from "react";
import { parseScenarioText } from "../scenario/schema.js";
import { useUserEnvironments } from "./envs/user-environments.js";
import { useLinkState } from "./link.js";
import { scenarioContacts } from "./security/contacts.js";
import { useLab } from "./store.js";

/**
 * The hosts other than this page that Run would contact with the scenario in the editor, and why: whatever put it
 * there (a typed URL, an imported run's scenario, a fork of it, a link opened without `run=1`), the user sees them
 * before pressing Run. Nothing while a link's run asks about the same hosts itself.
 */
export function RunContacts() {
  const text = useLab((s) => s.form.scenarioText);
  const hubAddress = useLab((s) => s.form.remoteHost);
  const userEnvironments = useUserEnvironments((s) => s.environments);
  const asking = useLinkState((s) => s.confirm !== null);
  const contacts = useMemo(() => {
    try {
      return scenarioContacts(parseScenarioText(text), { origin: location.origin, hubAddress, userEnvironments });
    } catch {
      // A scenario with problems does not run; Run says why.
      return [];
    }
  }, [text, hubAddress, userEnvironments]);
  if (contacts.length === 0 || asking) return null;
  return (
    <section className="run-contacts" aria-label="Hosts this run contacts" data-testid="run-contacts">
      <p>Run contacts {contacts.length === 1 ? "a host" : "hosts"} other than this page:</p>
      <ul>
        {contacts.map((c, i) => (
          <li key={i} data-testid="run-contact">
            {c.host} — {c.what}
          </li>
        ))}
      </ul>
    </section>
  );
}
