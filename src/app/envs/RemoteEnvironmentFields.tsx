/**
 * The remote environment's server: its URL and a "Connect" check of `<url>/info` (which also names its task), and how
 * to serve a Python environment class (NeMo RL's EnvironmentInterface) with the bridge (docs/python-environments.md).
 */

import { useState } from "react";
import { fetchRemoteInfo, type RemoteEnvironmentInfo } from "../../envs/http/index.js";

/** The bridge's one-line start command, as the docs give it. */
export const BRIDGE_COMMAND = "python -m rollout_lab_bridge my_pkg.envs:MyEnv --port 8765";

/** What the Python bridge said it serves, in words. */
export function bridgeWords(info: RemoteEnvironmentInfo): string | null {
  const bridge = info.bridge;
  if (!bridge) return null;
  const how = bridge.ray === "ray" ? "a Ray actor" : bridge.ray === "stand-in" ? "a Ray actor class, in the bridge's process (Ray is not installed there)" : "in the bridge's process";
  const parts = [`Python environment ${bridge.target ?? info.name}, ${how}`, bridge.torch ? "torch tensors" : "no torch", info.post_process ? "global_post_process_and_metrics after each run" : null];
  return parts.filter(Boolean).join(" · ");
}

export function RemoteEnvironmentFields(props: { url: string; onUrl(url: string): void; onConnected(info: RemoteEnvironmentInfo): void }) {
  const [state, setState] = useState<{ info?: RemoteEnvironmentInfo; error?: string; busy?: boolean }>({});
  const [copied, setCopied] = useState(false);
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
  const copy = () => {
    void navigator.clipboard?.writeText(BRIDGE_COMMAND).then(() => setCopied(true), () => setCopied(false));
  };
  const bridge = state.info ? bridgeWords(state.info) : null;
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
      {bridge && (
        <p className="hint wide-hint" data-testid="remote-env-bridge">
          {bridge}
        </p>
      )}
      <div className="hint wide-hint" data-testid="python-bridge-hint">
        <strong>Python environment</strong> (a NeMo RL <code>EnvironmentInterface</code> class, plain or <code>@ray.remote</code>): serve it
        with <code>pip install ./python</code>, then <code data-testid="python-bridge-command">{BRIDGE_COMMAND}</code>{" "}
        <button type="button" className="link" onClick={copy} aria-label="Copy the bridge's start command">
          {copied ? "copied" : "copy"}
        </button>{" "}
        and Connect to the URL it prints (docs/python-environments.md).
      </div>
    </>
  );
}
