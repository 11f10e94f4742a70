import { ModelPanel } from "./ModelPanel.js";
import { PRESETS } from "./presets.js";
import { useLab } from "./store.js";
import { TERMINATION_WORDS } from "./termination.js";

/** A plain page that runs a scenario in the browser and shows its result (the live lab comes later). */
export function App() {
  const { scenarioText, status, error, result, selected, model, liveTokens, setScenarioText, select, run, stop } = useLab();
  const sample = result?.samples[selected];
  return (
    <main>
      <header>
        <h1>Rollout Lab</h1>
        <p>Multi-turn RL rollouts run in your browser: the policy, the environments and the rollout loop.</p>
      </header>
      <section className="setup">
        <label>
          Preset{" "}
          <select
            aria-label="Preset"
            onChange={(e) => setScenarioText(JSON.stringify(PRESETS.find((p) => p.id === e.target.value)!.scenario, null, 2))}
          >
            {PRESETS.map((p) => (
              <option key={p.id} value={p.id}>
                {p.title}
              </option>
            ))}
          </select>
        </label>
        <ModelPanel />
        <textarea aria-label="Scenario" spellCheck={false} value={scenarioText} onChange={(e) => setScenarioText(e.target.value)} />
        <div className="controls">
          <button onClick={() => run()} disabled={status === "running"}>
            Run
          </button>
          <button className="secondary" onClick={() => stop()} disabled={status !== "running"}>
            Stop
          </button>
          <span>
            Status: <strong data-testid="run-status">{status}</strong>
          </span>
          {status === "running" && <span data-testid="live-tokens">{liveTokens} tokens generated</span>}
        </div>
        {model && (
          <p className="model-status" data-testid="model-status">
            Model <strong>{model.model}</strong>: {model.phase === "ready" ? `ready on ${model.device?.toUpperCase()}` : "loading"}
            {model.reason ? ` — ${model.reason}` : ""}
            {model.progress && model.phase === "loading" && (
              <>
                {" "}
                <progress data-testid="download-progress" max={1} value={model.progress.fraction} /> {model.progress.file}
              </>
            )}
            {model.model.startsWith("builtin:") && " · a pipeline model with random weights: its text is noise, its mechanics are real."}
          </p>
        )}
        {error && <pre className="error" data-testid="run-error">{error}</pre>}
      </section>
      {result && (
        <section className="result">
          <h2>Samples</h2>
          <table>
            <thead>
              <tr>
                <th>#</th>
                <th>idx</th>
                <th>task</th>
                <th>turns</th>
                <th>total reward</th>
                <th>ended</th>
              </tr>
            </thead>
            <tbody>
              {result.samples.map((s, i) => (
                <tr key={i} data-testid="sample-row" className={i === selected ? "selected" : ""} onClick={() => select(i)}>
                  <td>{i}</td>
                  <td>{s.idx}</td>
                  <td>{s.task_name}</td>
                  <td>{s.message_log.filter((m) => m.role === "assistant").length}</td>
                  <td>{s.total_reward}</td>
                  <td data-testid="termination">
                    {TERMINATION_WORDS[s.termination] ?? s.termination}
                    {s.error ? `: ${s.error}` : ""}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {sample && (
            <>
              <h2>Transcript of sample {selected}</h2>
              <ol className="transcript" data-testid="transcript">
                {sample.message_log.map((m, i) => (
                  <li key={i} className={`message ${m.role}`}>
                    <div className="role">
                      {m.role} · {m.token_ids.length} tokens
                    </div>
                    <pre>{m.content}</pre>
                  </li>
                ))}
              </ol>
            </>
          )}
          <h2>Metrics</h2>
          <pre data-testid="metrics">{JSON.stringify(result.metrics, null, 2)}</pre>
          <details>
            <summary>Result JSON</summary>
            <pre data-testid="result-json">{JSON.stringify(result)}</pre>
          </details>
        </section>
      )}
    </main>
  );
}
