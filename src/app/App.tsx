import { memo, useEffect, useMemo, useState } from "react";
import { byteLevelTokenizer, VOCAB_SIZE } from "../core/index.js";
import { CompareView } from "./compare/CompareView.js";
import { ErrorBoundary } from "./ErrorBoundary.js";
import { FaultProbe } from "./faults-debug.js";
import { ForkEditor } from "./fork/ForkEditor.js";
import { ForksPanel } from "./fork/ForksPanel.js";
import { turnNotesFor, useForks } from "./fork/fork-store.js";
import { HumanTurns } from "./HumanTurns.js";
import { KeepAndShare } from "./KeepAndShare.js";
import { KeepNotices } from "./KeepNotices.js";
import { LinkBanner, useSharedLinks } from "./LinkBanner.js";
import { ModelPanel } from "./ModelPanel.js";
import { ModelStatusLine } from "./ModelStatusLine.js";
import { PRESETS } from "./presets.js";
import { PreviewBanner } from "./PreviewBanner.js";
import { RecoveredRuns } from "./RecoveredRuns.js";
import { RunControls } from "./RunControls.js";
import { SetupForm } from "./setup/SetupForm.js";
import { resultText } from "./run/result-text.js";
import { useLab } from "./store.js";
import { useKeyboardNavigation } from "./useKeyboardNavigation.js";
import { BatchOverview } from "./views/BatchOverview.js";
import { EnvView } from "./views/EnvView.js";
import { MetricsPanel } from "./views/MetricsPanel.js";
import { Timeline } from "./views/Timeline.js";
import { TokenView } from "./views/TokenView.js";
import { Transcript } from "./views/Transcript.js";
import "./views/views.css";

type Tab = "transcript" | "tokens" | "environment" | "compare";

/** Token texts for text policies: the built-in byte-level vocabulary. */
const byteLevelTexts = {
  tokenText: (id: number) => (id < VOCAB_SIZE ? byteLevelTokenizer.tokenText(id) : `#${id}`),
  isSpecial: (id: number) => id < VOCAB_SIZE && byteLevelTokenizer.isSpecial(id),
};

/**
 * A model run's tokens are named by the model's own tokenizer (in the worker): the ids of the selected sample are
 * asked for, and shown as `#id` until their texts arrive.
 */
function useTokenTexts(ids: number[], forModel: boolean) {
  const { tokenTexts, tokenTextsVersion, requestTokenTexts } = useLab();
  useEffect(() => {
    if (forModel && ids.length) requestTokenTexts(ids);
  }, [forModel, ids, requestTokenTexts]);
  return useMemo(
    () =>
      forModel
        ? {
            tokenText: (id: number) => tokenTexts.get(id)?.text ?? `#${id}`,
            isSpecial: (id: number) => tokenTexts.get(id)?.special ?? false,
          }
        : byteLevelTexts,
    [forModel, tokenTexts, tokenTextsVersion],
  );
}

/** The run's result JSON, written once per result (not on every render of the page: a large run's is megabytes). */
const ResultJson = memo(function ResultJson() {
  const result = useLab((s) => s.result);
  const text = useMemo(() => resultText(result), [result]);
  return <pre data-testid="result-json">{text}</pre>;
});

export function App() {
  const { status, error, model, version, runScenario, selected, selectedTurn, scenarioText, setScenarioText, loadPreset, select, preview } = useLab();
  const [chosenTab, setTab] = useState<Tab>("transcript");
  // A preview (a big file still being read) is no run yet: not compared (nor forked, saved, exported) as the current run.
  const tab: Tab = preview && chosenTab === "compare" ? "transcript" : chosenTab;
  useKeyboardNavigation();
  // Forks: "Fork from here" on a transcript turn, notes on forked turns, and the forks list's "compare" opening the tab.
  const forks = useForks((s) => s.forks);
  const tabRequest = useForks((s) => s.tabRequest);
  useEffect(() => {
    if (tabRequest) setTab(tabRequest.tab);
  }, [tabRequest]);
  const turnNotes = useMemo(() => turnNotesFor(forks, model, selected), [forks, model, selected]);

  // A shared link loads its scenario, and runs it when it says so (asking first when it would reach other hosts).
  useSharedLinks();

  const sample = model?.samples[selected] ?? null;
  const envName = useMemo(() => {
    const envs = (runScenario?.envs ?? {}) as Record<string, { env: string }>;
    return sample ? (envs[sample.task]?.env ?? null) : null;
  }, [runScenario, sample]);
  const structured = runScenario?.structured?.enabled
    ? {
        enabled: true,
        envelope: (runScenario.structured.envelope ?? "fork") as "fork" | "template",
        thinkingStyle: (runScenario.structured.thinking_style === "closing_only" ? "closing_only" : "paired") as "paired" | "closing_only",
      }
    : null;
  const invalidActionEnabled = Boolean(runScenario?.invalid_action?.enabled);
  // Only the token view names tokens (a model run's texts come from the worker): no copy of the ids otherwise.
  const sampleIds = useMemo(() => (sample && tab === "tokens" ? sample.messages.flatMap((m) => m.token_ids) : []), [sample, version, tab]);
  const tokenTexts = useTokenTexts(sampleIds, runScenario?.policy.kind === "model");

  return (
    <div className="lab">
      <header className="topbar">
        <div>
          <h1>Rollout Lab</h1>
          <p>Multi-turn RL rollouts in your browser: the policy, the environments and the rollout loop, turn by turn.</p>
        </div>
        <RunControls />
      </header>
      <FaultProbe where="page" />
      <ModelStatusLine />
      {error && (
        <pre className="error" data-testid="run-error">
          {error}
        </pre>
      )}
      <LinkBanner />
      <KeepNotices />
      <RecoveredRuns />
      <div className="columns">
        <aside className="setup">
          <label className="field wide">
            <span>Preset</span>
            <select aria-label="Preset" defaultValue="" onChange={(e) => loadPreset(PRESETS.find((p) => p.title === e.target.value)!)}>
              <option value="" disabled>
                choose a demo or an example…
              </option>
              {PRESETS.map((p) => (
                <option key={p.id} value={p.title}>
                  {p.title}
                </option>
              ))}
            </select>
          </label>
          <SetupForm />
          <ModelPanel />
          <details className="advanced">
            <summary>Scenario JSON (what runs)</summary>
            <textarea aria-label="Scenario" spellCheck={false} value={scenarioText} onChange={(e) => setScenarioText(e.target.value)} />
          </details>
          <KeepAndShare />
        </aside>
        <main className="views">
          <ErrorBoundary
            where="Showing this run"
            testId="view-error"
            resetKey={model}
            actions={(reset) => (
              <button
                className="secondary"
                onClick={() => {
                  // The run stays where it is kept (saved runs, its file); the views go back to empty.
                  useLab.setState({ model: null, version: 0, selected: 0, selectedTurn: null });
                  reset();
                }}
                disabled={status === "running" || status === "paused"}
              >
                Close this run
              </button>
            )}
          >
          <FaultProbe where="views" />
          <PreviewBanner />
          {!model && <p className="empty">Set up a run and press Run. Keys: ↑/↓ or j/k move between samples, ←/→ or h/l between turns.</p>}
          <HumanTurns />
          {model && (
            <>
              <section className="panel">
                <h2>Batch</h2>
                <BatchOverview model={model} version={version} selected={selected} selectedTurn={selectedTurn} onSelect={select} />
              </section>
              <ForksPanel />
              {sample && (
                <section className="panel">
                  <div className="tabs" role="tablist">
                    {(["transcript", "tokens", "environment", "compare"] as const).map((t) => (
                      <button
                        key={t}
                        role="tab"
                        aria-selected={tab === t}
                        className={tab === t ? "tab active" : "tab"}
                        disabled={t === "compare" && preview !== null}
                        onClick={() => setTab(t)}
                      >
                        {t === "transcript" ? `Transcript · sample ${selected}` : t === "tokens" ? "Tokens" : t === "environment" ? "Environment" : "Compare"}
                      </button>
                    ))}
                  </div>
                  {tab === "transcript" && <ForkEditor />}
                  {tab === "transcript" && (
                    <Transcript
                      sample={sample}
                      version={version}
                      selectedTurn={selectedTurn}
                      onSelectTurn={(turn) => select(selected, turn)}
                      structured={structured}
                      onFork={useForks.getState().openEditor}
                      canFork={status !== "running" && status !== "paused" && !preview && sample.state === "done" && runScenario !== null}
                      turnNotes={turnNotes}
                    />
                  )}
                  {tab === "tokens" && <TokenView sample={sample} version={version} tokenizer={tokenTexts} />}
                  {tab === "environment" && <EnvView model={model} version={version} sample={selected} turn={selectedTurn} envName={envName} />}
                  {tab === "compare" && <CompareView />}
                </section>
              )}
              <section className="panel panel-lazy">
                <h2>Metrics</h2>
                <MetricsPanel model={model} version={version} invalidActionEnabled={invalidActionEnabled} />
              </section>
              <section className="panel panel-lazy">
                <h2>Timeline</h2>
                <Timeline model={model} version={version} selected={selected} onSelect={(s) => select(s, null)} />
              </section>
              {status === "finished" && model.finalBatch && (
                <details className="panel">
                  <summary>Result JSON</summary>
                  <ResultJson />
                </details>
              )}
            </>
          )}
          </ErrorBoundary>
        </main>
      </div>
    </div>
  );
}
