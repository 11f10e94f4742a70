import { memo, useCallback, useEffect, useMemo } from "react";
import { byteLevelTokenizer, VOCAB_SIZE } from "../core/index.js";
import { CompareView } from "./compare/CompareView.js";
import { ErrorBoundary } from "./ErrorBoundary.js";
import { FaultProbe } from "./faults-debug.js";
import { ForkEditor } from "./fork/ForkEditor.js";
import { ForksPanel } from "./fork/ForksPanel.js";
import { turnNotesFor } from "./fork/forks-slice.js";
import { HumanTurns } from "./HumanTurns.js";
import { KeepAndShare } from "./KeepAndShare.js";
import { KeepNotices } from "./KeepNotices.js";
import { SkipLinks } from "./layout/SkipLinks.js";
import { LabColumns, MasterDetail } from "./layout/Workspace.js";
import { LinkBanner, useSharedLinks } from "./LinkBanner.js";
import { ModelPanel } from "./ModelPanel.js";
import { ModelStatusLine } from "./ModelStatusLine.js";
import { RunContacts } from "./RunContacts.js";
import { PRESETS } from "./presets.js";
import { PreviewBanner } from "./PreviewBanner.js";
import { RecoveredRuns } from "./RecoveredRuns.js";
import { RunControls } from "./RunControls.js";
import { SetupForm } from "./setup/SetupForm.js";
import { OUTCOME_WORDS, sampleOutcome } from "./run/outcome.js";
import { resultText } from "./run/result-text.js";
import { formatNumber } from "./views/charts/bins.js";
import { isByteLevelSpec, loadTokenizerFor, tokenizerSpecOf, withRunTokenizer, type CheckScenario } from "./views/token-check-view.js";
import { RunTokenizerPicker } from "./views/tokens/RunTokenizerPicker.js";
import { SearchHighlight } from "./views/transcript/search-highlight.js";
import { parseSearch } from "./run/text-search.js";
import type { TokenizerFiles } from "./worker/protocol.js";
import { MISMATCH_THRESHOLD, sampleMismatch, type SampleMismatch } from "./run/mismatch.js";
import { runGroups } from "./run/groups.js";
import type { Scenario } from "../scenario/schema.js";
import type { RunModel, SampleView } from "./run/run-model.js";
import { useRun, useShown } from "./session/hooks.js";
import { isLive } from "./session/run-session.js";
import type { Tab } from "./state/view-slice.js";
import { client, session, useLab } from "./store.js";
import { useKeyboardNavigation } from "./useKeyboardNavigation.js";
import { BatchOverview } from "./views/BatchOverview.js";
import { EnvView } from "./views/EnvView.js";
import { MetricsPanel } from "./views/MetricsPanel.js";
import { Timeline } from "./views/Timeline.js";
import { TokenView } from "./views/TokenView.js";
import { Transcript } from "./views/Transcript.js";
import "./views/views.css";


/** Token texts for text policies: the built-in byte-level vocabulary. */
const byteLevelTexts = {
  tokenText: (id: number) => (id < VOCAB_SIZE ? byteLevelTokenizer.tokenText(id) : `#${id}`),
  isSpecial: (id: number) => id < VOCAB_SIZE && byteLevelTokenizer.isSpecial(id),
};

/**
 * A model run's tokens are named by the model's own tokenizer (in the worker): the ids of the selected sample are
 * asked for, and shown as `#id` until their texts arrive.
 */
/** The token texts of a run's vocabulary: a real one's asked of the worker, the byte-level one's computed here. */
function useTokenTexts(ids: number[], vocabulary: string | null) {
  const texts = useLab((s) => s.tokens.texts);
  useEffect(() => {
    if (vocabulary !== null && ids.length) useLab.getState().tokens.request(ids, vocabulary);
  }, [vocabulary, ids]);
  return useMemo(
    () =>
      vocabulary !== null
        ? {
            tokenText: (id: number) => texts.get(id)?.text ?? `#${id}`,
            isSpecial: (id: number) => texts.get(id)?.special ?? false,
          }
        : byteLevelTexts,
    [vocabulary, texts],
  );
}

/**
 * Whether a run's generated tokens were sampled (their log-probabilities are real): a model policy's. A run without
 * its scenario (an imported file) counts as sampled when some log-probability is not a text policy's placeholder 0.
 */
function sampledPolicy(scenario: Scenario | null, sample: SampleView): boolean {
  if (scenario) return scenario.policy.kind === "model";
  return sample.messages.some((m) => m.generation_logprobs?.some((lp) => lp !== 0));
}

/** The run's result JSON, written once per result (not on every render of the page: a large run's is megabytes). */
const ResultJson = memo(function ResultJson() {
  const result = useShown((s) => s.result);
  const text = useMemo(() => resultText(result), [result]);
  return <pre data-testid="result-json">{text}</pre>;
});

/** The page's keys, as the empty page lists them (./useKeyboardNavigation.ts has them). */
const KEYS_HINT = "Keys: ↑/↓ or j/k move between samples, ←/→ or h/l between turns, n/N to the next/previous failure, 1–4 the tabs.";

const TAB_NAMES: Record<Tab, string> = { transcript: "Transcript", tokens: "Tokens", environment: "Environment", compare: "Compare" };

/** The selected sample's panel: its transcript, tokens, environment, or the comparison. Redrawn as the run publishes. */
function SamplePanel({ model }: { model: RunModel }) {
  const run = useRun(model);
  const status = useShown((s) => s.status);
  const runScenario = useShown((s) => s.scenario);
  const previewing = useShown((s) => s.preview !== null);
  const selected = useLab((s) => s.selection.selected);
  const selectedTurn = useLab((s) => s.selection.selectedTurn);
  const chosenTab = useLab((s) => s.view.tab);
  const forks = useLab((s) => s.forks.forks);
  const { select } = useLab.getState().selection;
  const { setTab } = useLab.getState().view;
  // A preview (a big file still being read) is no run yet: not compared (nor forked, saved, exported) as the current run.
  const tab: Tab = previewing && chosenTab === "compare" ? "transcript" : chosenTab;
  // Forks: "Fork from here" on a transcript turn, and notes on forked turns.
  const turnNotes = useMemo(() => turnNotesFor(forks, model, selected), [forks, model, selected]);
  const sample = model.samples[selected] ?? null;
  const envName = useMemo(() => {
    const envs = (runScenario?.envs ?? {}) as Record<string, { env: string }>;
    return sample ? (envs[sample.task]?.env ?? null) : null;
  }, [runScenario, sample]);
  // Only the token view names tokens (a model run's texts come from the worker): no copy of the ids otherwise.
  const sampleIds = useMemo(() => (tab === "tokens" ? (run.model.samples[selected]?.messages.flatMap((m) => m.token_ids) ?? []) : []), [run, selected, tab]);
  const selectTurn = useCallback((turn: number) => select(selected, turn), [select, selected]);
  const tokensScenario = useTokensScenario(model, runScenario as CheckScenario);
  const search = useLab((s) => s.view.search);
  const searchPattern = useMemo(() => {
    const pattern = parseSearch(search);
    return pattern && !("error" in pattern) ? pattern : null;
  }, [search]);
  const vocabulary = tokenizerSpecOf(tokensScenario);
  const tokenTexts = useTokenTexts(sampleIds, isByteLevelSpec(vocabulary) ? null : vocabulary);
  if (!sample) return null;
  const structured = runScenario?.structured?.enabled
    ? {
        enabled: true,
        envelope: (runScenario.structured.envelope ?? "fork") as "fork" | "template",
        thinkingStyle: (runScenario.structured.thinking_style === "closing_only" ? "closing_only" : "paired") as "paired" | "closing_only",
      }
    : null;
  return (
    <section className="panel sample-panel" aria-label={`Sample ${selected}`}>
      <SampleHead sample={sample} />
      <ImportedFields model={model} sample={selected} />
      <GroupPanel model={model} sample={selected} />
      <div className="tabs" role="tablist">
        {(["transcript", "tokens", "environment", "compare"] as const).map((t) => (
          <button
            key={t}
            role="tab"
            aria-selected={tab === t}
            className={tab === t ? "tab active" : "tab"}
            disabled={t === "compare" && previewing}
            onClick={() => setTab(t)}
          >
            {t === "transcript" ? `Transcript · sample ${selected}` : TAB_NAMES[t]}
          </button>
        ))}
      </div>
      {tab === "transcript" && <ForkEditor />}
      {tab === "transcript" && (
        <SearchHighlight.Provider value={searchPattern}>
          <Transcript
            sample={sample}
            selectedTurn={selectedTurn}
            onSelectTurn={selectTurn}
            structured={structured}
            onFork={useLab.getState().forks.openEditor}
            canFork={!isLive(status) && !previewing && sample.state === "done" && runScenario !== null}
            turnNotes={turnNotes}
          />
        </SearchHighlight.Provider>
      )}
      {tab === "tokens" && tokenizerSpecOf(runScenario as CheckScenario) === null && <RunTokenizerChoice model={model} />}
      {tab === "tokens" && <TokenView sample={sample} tokenizer={tokenTexts} sampled={sampledPolicy(runScenario, sample)} scenario={tokensScenario} workerCheck={client.checkTokens} loadTokenizer={loadTokenizerAlone} />}
      {tab === "environment" && <EnvView model={model} sample={selected} turn={selectedTurn} envName={envName} />}
      {tab === "compare" && <CompareView />}
    </section>
  );
}

/**
 * The selected sample in one line that wraps rather than cuts: its task name and its error whole (the batch's cells
 * cut them to fit), its outcome and reward.
 */
function SampleHead({ sample }: { sample: SampleView }) {
  const outcome = sampleOutcome(sample);
  return (
    <div className="sample-head" data-testid="sample-head">
      <strong>sample {sample.sample}</strong>
      <span className="hint"> · idx {sample.idx} · </span>
      <span className="sample-task" data-testid="sample-task">
        {sample.task}
      </span>
      <span className={`ov-outcome outcome-${outcome ?? "running"}`}> · {outcome ? OUTCOME_WORDS[outcome] : "running"}</span>
      <span className="hint"> · reward {formatNumber(sample.totalReward)}</span>
      {sample.error && (
        <p className="sample-error" data-testid="sample-error">
          {sample.error}
        </p>
      )}
    </div>
  );
}

/**
 * What a run imported from another library's dump kept of the selected sample that the lab has no place for (its
 * advantages, the trainer's log-probabilities, ground truths, …): shown as JSON text, never as markup.
 */
function ImportedFields({ model, sample }: { model: RunModel; sample: number }) {
  const column = model.finalBatch?.imported;
  const entry = Array.isArray(column) ? (column[sample] as { format?: unknown; fields?: unknown } | null | undefined) : undefined;
  if (!entry || typeof entry !== "object" || !entry.fields || typeof entry.fields !== "object") return null;
  const fields = entry.fields as Record<string, unknown>;
  const sampleView = model.samples[sample];
  const mismatch = sampleView ? sampleMismatch(sampleView, entry) : null;
  return (
    <>
      {mismatch && <MismatchStrip mismatch={mismatch} />}
      <details className="imported-fields" data-testid="imported-fields">
        <summary>
          Imported from {String(entry.format ?? "a dump")}: {Object.keys(fields).length} more field{Object.keys(fields).length === 1 ? "" : "s"} (
          {Object.keys(fields).slice(0, 6).join(", ")}
          {Object.keys(fields).length > 6 ? ", …" : ""})
        </summary>
        <pre>{JSON.stringify(fields, null, 2)}</pre>
      </details>
    </>
  );
}

/**
 * The selected sample's GRPO group side by side (../run/groups.ts): each member's reward, advantage (where the dump
 * has one), length and ending; a row selects its sample. Only for a group of more than one.
 */
function GroupPanel({ model, sample }: { model: RunModel; sample: number }) {
  const run = useRun(model);
  const groups = useMemo(() => runGroups(run.model.samples, run.model.finalBatch), [run]);
  const group = groups.of.get(sample);
  if (!group || group.samples.length < 2) return null;
  const imported = model.finalBatch?.imported;
  const advantage = (n: number) => {
    const fields = (imported?.[n] as { fields?: Record<string, unknown> } | null | undefined)?.fields;
    const a = fields?.advantage ?? fields?.advantages;
    if (typeof a === "number") return formatNumber(a, 4);
    if (Array.isArray(a)) {
      const nums = a.filter((x): x is number => typeof x === "number" && x !== 0);
      return nums.length ? formatNumber(nums[0]!, 4) : "0";
    }
    return "";
  };
  const zero = group.zeroVariance;
  return (
    <details className="group-panel" data-testid="group-panel">
      <summary>
        its group: {group.samples.length} samples ({group.by === "prompt" ? "the same prompt" : `the same ${group.by}`}) · mean reward {formatNumber(group.meanReward, 4)} · std{" "}
        {formatNumber(group.std, 4)}
        {zero && <span className="has-problems"> · zero variance: no gradient</span>}
      </summary>
      <table className="mx-table">
        <thead>
          <tr>
            <th>sample</th>
            <th>reward</th>
            <th>advantage</th>
            <th>tokens</th>
            <th>ended</th>
          </tr>
        </thead>
        <tbody>
          {group.samples.map((n) => {
            const s = model.samples[n]!;
            return (
              <tr key={n} data-group-sample={n} aria-selected={n === sample} className={n === sample ? "selected" : undefined} onClick={() => useLab.getState().selection.select(n, null)}>
                <td>{n}</td>
                <td>{formatNumber(s.totalReward, 4)}</td>
                <td>{advantage(n)}</td>
                <td>{s.messages.reduce((t, m) => t + m.token_ids.length, 0)}</td>
                <td>{s.termination ?? s.state}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </details>
  );
}

/** Most compared tokens drawn in the per-token strip (a long generation's first ones; the numbers cover all). */
const MISMATCH_CHIPS = 400;

/**
 * The sample's trainer-against-engine log-probabilities: its numbers, and a strip of its trained tokens, each shaded
 * by |Δ| (its title: the token's place, Δ), the largest marked.
 */
function MismatchStrip({ mismatch }: { mismatch: SampleMismatch }) {
  const compared = mismatch.deltas.flatMap((d, i) => (d === null ? [] : [[i, d] as const]));
  return (
    <div className="mismatch" data-testid="sample-mismatch">
      <p className="hint">
        trainer vs engine log-probs over {mismatch.tokens} trained tokens: mean |Δ| {formatNumber(mismatch.meanAbs, 4)} · max{" "}
        {formatNumber(mismatch.maxAbs, 4)} (token #{mismatch.maxAt}) · {formatNumber(mismatch.overThreshold * 100, 3)}% over {MISMATCH_THRESHOLD} ·
        sequence ratio {formatNumber(mismatch.sequenceRatio, 4)}
      </p>
      <div className="mismatch-strip" aria-label="Δ per trained token">
        {compared.slice(0, MISMATCH_CHIPS).map(([i, d]) => (
          <span
            key={i}
            className={i === mismatch.maxAt ? "mismatch-chip max" : "mismatch-chip"}
            style={{ opacity: 0.15 + 0.85 * Math.min(1, Math.abs(d) / Math.max(MISMATCH_THRESHOLD, mismatch.maxAbs)) }}
            title={`token #${i}: Δ = prev − generation = ${d.toFixed(4)}`}
          />
        ))}
      </div>
    </div>
  );
}

/** The scenario a run's tokens are read with: its own, or with the tokenizer chosen in the page for it. */
function useTokensScenario(model: RunModel, scenario: CheckScenario): CheckScenario {
  const chosen = useLab((s) => (s.view.runTokenizer?.run === model ? s.view.runTokenizer.spec : null));
  return useMemo(() => withRunTokenizer(scenario, chosen), [scenario, chosen]);
}

/** Loads a tokenizer alone in the rollout worker: a hub id's from the set-up's Hub address. */
function loadTokenizerAlone(spec: string, from: TokenizerFiles = {}): Promise<void> {
  const host = useLab.getState().form.remoteHost.trim();
  return client.loadTokenizer(spec, from.localFiles || !host ? from : { remoteHost: host.replace(/\/?$/, "/") });
}

/** The tokenizer chosen for a run that names none (./views/tokens/RunTokenizerPicker.tsx). */
function RunTokenizerChoice({ model }: { model: RunModel }) {
  const chosen = useLab((s) => (s.view.runTokenizer?.run === model ? s.view.runTokenizer.spec : null));
  const hubAddress = useLab((s) => s.form.remoteHost);
  const { setRunTokenizer } = useLab.getState().view;
  return (
    <RunTokenizerPicker
      chosen={chosen}
      hubAddress={hubAddress}
      load={async (spec, from) => {
        await loadTokenizerFor((m) => loadTokenizerAlone(m, from), spec);
        // A folder picked again may hold another tokenizer under the same name: its texts are asked afresh.
        useLab.getState().tokens.clear();
        setRunTokenizer({ run: model, spec });
      }}
      clear={() => setRunTokenizer(null)}
    />
  );
}

/** The batch overview at the selection. */
function BatchOverviewPanel({ model }: { model: RunModel }) {
  const selected = useLab((s) => s.selection.selected);
  const selectedTurn = useLab((s) => s.selection.selectedTurn);
  const closingOnly = useShown((s) => s.scenario?.structured?.enabled === true && s.scenario.structured.thinking_style === "closing_only");
  const scenario = useTokensScenario(model, useShown((s) => s.scenario) as CheckScenario);
  return (
    <BatchOverview
      model={model}
      selected={selected}
      selectedTurn={selectedTurn}
      onSelect={useLab.getState().selection.select}
      thinkingStyle={closingOnly ? "closing_only" : "paired"}
      scenario={scenario}
      workerCheck={client.checkTokens}
      onShownRows={useLab.getState().selection.setShownRows}
      onSearch={useLab.getState().view.setSearch}
    />
  );
}

const selectSample = (sample: number) => useLab.getState().selection.select(sample, null);

/** The timeline at the selection. */
function TimelinePanel({ model }: { model: RunModel }) {
  const selected = useLab((s) => s.selection.selected);
  return <Timeline model={model} selected={selected} onSelect={selectSample} />;
}

export function App() {
  const status = useShown((s) => s.status);
  const error = useShown((s) => s.error);
  const model = useShown((s) => s.model);
  const runScenario = useShown((s) => s.scenario);
  const scenarioText = useLab((s) => s.form.scenarioText);
  const preset = useLab((s) => s.form.preset);
  const { setScenarioText, loadPreset } = useLab.getState().form;
  useKeyboardNavigation();
  // A shared link loads its scenario, and runs it when it says so (asking first when it would reach other hosts).
  useSharedLinks();
  const invalidActionEnabled = Boolean(runScenario?.invalid_action?.enabled);

  return (
    <div className="lab">
      <SkipLinks />
      <header className="topbar">
        <div>
          <h1>Rollout Lab</h1>
          <p>Multi-turn RL rollouts in your browser: the policy, the environments and the rollout loop, turn by turn.</p>
        </div>
        <RunControls />
      </header>
      <FaultProbe where="page" />
      <ModelStatusLine />
      <RunContacts />
      {error && (
        <pre className="error" data-testid="run-error">
          {error}
        </pre>
      )}
      <LinkBanner />
      <KeepNotices />
      <RecoveredRuns />
      <LabColumns
        setup={
          <>
            <label className="field wide">
              <span>Preset</span>
              {/* Shows the preset loaded until something changes the set-up (then it was that preset no more). */}
              <select aria-label="Preset" value={PRESETS.find((p) => p.id === preset)?.title ?? ""} onChange={(e) => loadPreset(PRESETS.find((p) => p.title === e.target.value)!)}>
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
          </>
        }
        views={
          <main className="views" id="views">
            <ErrorBoundary
              where="Showing this run"
              testId="view-error"
              resetKey={model}
              actions={(reset) => (
                <button
                  className="secondary"
                  onClick={() => {
                    // The run stays where it is kept (saved runs, its file); the views go back to empty.
                    session.close();
                    reset();
                  }}
                  disabled={isLive(status)}
                >
                  Close this run
                </button>
              )}
            >
              <FaultProbe where="views" />
              <PreviewBanner />
              {!model && <p className="empty">Set up a run and press Run. {KEYS_HINT}</p>}
              {model ? (
                <MasterDetail
                  master={
                    <>
                      <HumanTurns />
                      <section className="panel" id="batch" aria-label="Batch">
                        <h2>Batch</h2>
                        <BatchOverviewPanel model={model} />
                      </section>
                      <ForksPanel />
                      <section className="panel panel-lazy">
                        <h2>Metrics</h2>
                        <MetricsPanel model={model} invalidActionEnabled={invalidActionEnabled} />
                      </section>
                      <section className="panel panel-lazy">
                        <h2>Timeline</h2>
                        <TimelinePanel model={model} />
                      </section>
                      {status === "finished" && model.finalBatch && (
                        <details className="panel">
                          <summary>Result JSON</summary>
                          <ResultJson />
                        </details>
                      )}
                    </>
                  }
                  detail={<SamplePanel model={model} />}
                />
              ) : (
                <HumanTurns />
              )}
            </ErrorBoundary>
          </main>
        }
      />
    </div>
  );
}
