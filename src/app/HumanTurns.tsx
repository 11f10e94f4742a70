import { useState } from "react";
import { useShown } from "./session/hooks.js";
import { session } from "./store.js";
import type { HumanRequest } from "./worker/protocol.js";

function HumanTurn({ request }: { request: HumanRequest }) {
  const [text, setText] = useState("");
  return (
    <li className="human-turn" data-testid="human-turn">
      <div className="hint">
        Sample {request.sample}, turn {request.turn}
        {request.stopStrings?.length ? ` · stops at ${request.stopStrings.map((s) => JSON.stringify(s)).join(", ")}` : ""}
      </div>
      <pre className="context-tail">{request.contextTail.slice(-600)}</pre>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          session.answerHuman(request.requestId, text);
        }}
      >
        <textarea aria-label={`Your reply for sample ${request.sample}`} value={text} onChange={(e) => setText(e.target.value)} />
        <button type="submit">Send</button>
      </form>
    </li>
  );
}

/** The human policy's pending turns: the end of each sample's context and a box for the assistant's reply. */
export function HumanTurns() {
  const requests = useShown((s) => s.humanRequests);
  if (requests.length === 0) return null;
  return (
    <section className="panel human">
      <h2>Your turn ({requests.length} waiting)</h2>
      <ul>
        {requests.map((r) => (
          <HumanTurn key={r.requestId} request={r} />
        ))}
      </ul>
    </section>
  );
}
