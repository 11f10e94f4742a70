/** The remote environment's server: its URL and a "Connect" check of `<url>/info` (which also names its task). */

import { useState } from "react";
import { fetchRemoteInfo, type RemoteEnvironmentInfo } from "../../envs/http/index.js";

export function RemoteEnvironmentFields(props: { url: string; onUrl(url: string): void; onConnected(info: RemoteEnvironmentInfo): void }) {
  const [state, setState] = useState<{ info?: RemoteEnvironmentInfo; error?: string; busy?: boolean }>({});
  const connect = async () => {
    setState({ busy: true });
    try {
      const info = await fetchRemoteInfo(props.url.trim());
      setState({ info });
      props.onConnected(info);
    } catch (e) {
      setState({ error: (e as Error).message });
    }
  };
  return (
    <>
      <div className="field wide row">
        <input aria-label="Environment server URL" value={props.url} onChange={(e) => props.onUrl(e.target.value)} />
        <button type="button" onClick={connect} disabled={state.busy || !props.url.trim()}>
          Connect
        </button>
      </div>
      <p className="hint wide-hint" data-testid="remote-env-status">
        {state.busy
          ? "connecting…"
          : state.info
            ? `Connected: ${state.info.title ?? state.info.name}${state.info.description ? ` — ${state.info.description}` : ""}`
            : state.error
              ? `Not connected: ${state.error}`
              : "A server speaking docs/remote-environments.md (e.g. python3 environments/remote/number_guess_server.py)."}
      </p>
    </>
  );
}
