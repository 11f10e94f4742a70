/**
 * A big file's preview (./preview-import.ts): the run model built a slice at a time from the samples as they are
 * read is the import's (`buildRun` of the whole read), whatever the batches; the preview's states; and the session's
 * side (`RunSession.preview`, ../session/run-session.ts): the run shown before is set aside and comes back as it was, or goes once the
 * preview is imported.
 */

import { beforeEach, describe, expect, it } from "vitest";
import type { RolloutEvent } from "../../core/index.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import calculator from "../../scenario/examples/calculator-scripted.json";
import workspace from "../../scenario/examples/workspace-structured.json";
import { FakeRunClient, plainSelection } from "../session/fake-client.fixture.js";
import { RunSession, type Shown } from "../session/run-session.js";
import { buildRun, exportJsonl, readJsonl, type JsonlReadResult } from "./jsonl.js";
import type { SampleLine } from "../../scenario/jsonl-reader.js";
import { PreviewImport, type PreviewProgress, type PreviewTarget } from "./preview-import.js";
import { RunModel } from "./run-model.js";

async function exported(source: unknown): Promise<string> {
  const scenario = parseScenario(source);
  const model = new RunModel();
  await runScenario(scenario, { onEvent: (e: RolloutEvent) => model.apply(structuredClone(e)) });
  return exportJsonl(model, scenario);
}

/** The export `text` with its sample lines repeated to `count` samples (each its own idx): a run of many samples. */
function widened(text: string, count: number): string {
  const lines = text.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  const samples = lines.filter((l) => "message_log" in l);
  const footer = lines.filter((l) => !("message_log" in l));
  const out = Array.from({ length: count }, (_, i) => JSON.stringify({ ...samples[i % samples.length]!, idx: i }));
  return `${[...out, ...footer.map((f) => JSON.stringify(f))].join("\n")}\n`;
}

/** A byte stream of `text` in pieces of `size` bytes (a line split across pieces, as a file's chunks are). */
function chunked(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

/** A target that records what the preview asked of it. */
function recorder(accept = true) {
  const log: string[] = [];
  const progress: PreviewProgress[] = [];
  let shown: RunModel | null = null;
  const target: PreviewTarget = {
    begin(model) {
      log.push("begin");
      if (accept) shown = model;
      return accept;
    },
    changed: () => log.push(`changed ${shown?.samples.length}`),
    progress: (p) => progress.push(p),
    discard: () => log.push("discard"),
  };
  return { target, log, progress, shown: () => shown };
}

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Reads `text` in pieces, handing every batch of samples to `preview` as the page does. */
async function readInto(preview: PreviewImport, text: string, pieceBytes: number): Promise<JsonlReadResult> {
  const read = await readJsonl(chunked(text, pieceBytes), { onSamples: (samples) => preview.add(samples) });
  await preview.drained();
  return read;
}

const comparable = (model: RunModel, scenario: unknown) => ({
  jsonl: exportJsonl(model, scenario),
  samples: JSON.parse(JSON.stringify(model.samples)),
  summary: { ...model.summary, startedAt: 0 },
  batch: JSON.parse(JSON.stringify(model.finalBatch)),
});

describe("a preview's run model", () => {
  for (const [name, source] of [["calculator", calculator], ["workspace", workspace]] as const) {
    for (const piece of [7, 160, 4096, 1 << 20]) {
      it(`${name}, read ${piece} bytes at a time: the model kept is the import's`, async () => {
        const text = widened(await exported(source), 9);
        const { target, shown } = recorder();
        const preview = new PreviewImport(target, { sliceMs: 0, yieldToPage: nextTurn });
        const read = await readInto(preview, text, piece);
        expect(preview.state).toBe("shown");
        expect(shown()).toBe(preview.model);
        expect(preview.shownSamples).toBe(read.samples.length);
        const kept = preview.keep(read)!;
        expect(preview.state).toBe("kept");
        expect(kept.model).toBe(preview.model);
        const built = buildRun(read);
        expect(comparable(kept.model, kept.scenario)).toEqual(comparable(built.model, built.scenario));
        // One copy of every message: the samples' own; the final batch keeps no column of them.
        expect(kept.model.finalBatch!.message_log).toBeUndefined();
      });
    }
  }

  it("samples are added a slice at a time, the views told after each; a sample is whole when it shows", async () => {
    const text = widened(await exported(calculator), 12);
    let now = 0;
    const seen: number[][] = [];
    const { target, log } = recorder();
    const preview = new PreviewImport(target, {
      sliceMs: 5,
      now: () => now,
      yieldToPage: async () => {
        // What the page sees between two slices: whole samples only (each with all its turns, ended).
        seen.push(preview.model.samples.map((s) => (s.state === "done" ? s.turns.length : -1)));
        await nextTurn();
      },
    });
    const read = await readJsonl(new Blob([text]));
    const lines = read.samples;
    // Each sample "costs" 3 ms: two a slice.
    const apply = (preview as unknown as { applySample(s: SampleLine, i: number): void }).applySample.bind(preview);
    (preview as unknown as { applySample(s: SampleLine, i: number): void }).applySample = (s, i) => {
      now += 3;
      apply(s, i);
    };
    preview.add(lines.slice(0, 1));
    // The first slice runs at once, in the task that brought the samples.
    expect(preview.model.samples).toHaveLength(1);
    // More samples in the same task (the first pump is over): a new pump.
    preview.add(lines.slice(1));
    expect(preview.model.samples).toHaveLength(3);
    await preview.drained();
    expect(preview.model.samples).toHaveLength(lines.length);
    expect(seen.length).toBeGreaterThan(0);
    seen.forEach((s, i) => {
      expect(s.every((turns) => turns >= 0)).toBe(true);
      expect(s.length).toBe(3 + 2 * i);
    });
    expect(log[0]).toBe("begin");
    expect(log.at(-1)).toBe(`changed ${lines.length}`);
    // Before the end nothing is final: no batch, the run not finished.
    expect(preview.model.finalBatch).toBeNull();
    expect(preview.model.summary.status).toBe("running");
  });

  it("states: refused, discarded, superseded; nothing is added or kept after the end", async () => {
    const text = await exported(calculator);
    const read = await readJsonl(new Blob([text]));

    const refused = recorder(false);
    const a = new PreviewImport(refused.target, { sliceMs: 0, yieldToPage: nextTurn });
    a.add(read.samples);
    expect(a.state).toBe("refused");
    expect(a.model.samples).toHaveLength(0);
    expect(a.keep(read)).toBeNull();
    a.discard();
    expect(refused.log).toEqual(["begin"]);

    const nothing = recorder();
    const b = new PreviewImport(nothing.target);
    b.add([]);
    expect(b.state).toBe("waiting");
    b.discard();
    expect(b.state).toBe("discarded");
    expect(nothing.log).toEqual([]);

    const discarded = recorder();
    const c = new PreviewImport(discarded.target, { sliceMs: 0, yieldToPage: nextTurn });
    c.add(read.samples.slice(0, 1));
    c.progress({ linesRead: 1, bytesRead: 10, totalBytes: 100, phase: "reading", badLines: 0 });
    c.discard();
    c.add(read.samples.slice(1));
    await c.drained();
    expect(c.state).toBe("discarded");
    expect(c.model.samples).toHaveLength(1);
    expect(c.keep(read)).toBeNull();
    expect(discarded.log.filter((l) => l === "discard")).toHaveLength(1);
    expect(discarded.progress).toHaveLength(1);

    const superseded = recorder();
    const d = new PreviewImport(superseded.target, { sliceMs: 0, yieldToPage: nextTurn });
    d.add(read.samples);
    d.supersede();
    await d.drained();
    expect(d.state).toBe("discarded");
    expect(superseded.log).not.toContain("discard");

    // Kept: a later discard changes nothing.
    const kept = recorder();
    const e = new PreviewImport(kept.target, { sliceMs: 0, yieldToPage: nextTurn });
    e.add(read.samples.slice(0, 2));
    // Not drained yet: keep adds what is missing (the read's samples, of which the handed ones are the first).
    const run = e.keep(read)!;
    expect(run.model.samples).toHaveLength(read.samples.length);
    e.discard();
    expect(e.state).toBe("kept");
    expect(kept.log).not.toContain("discard");
  });
});

describe("the session's side of a preview (RunSession.preview)", () => {
  let client: FakeRunClient;
  let selection: ReturnType<typeof plainSelection>;
  let session: RunSession;
  let progressed: PreviewProgress[];
  beforeEach(() => {
    client = new FakeRunClient();
    selection = plainSelection();
    session = new RunSession(client, { selection, environments: { settled: async () => undefined, connect: () => ({ ports: [], overdue: () => {}, release: () => {} }) } });
    progressed = [];
  });
  const target = (controls: { stop(): void; replaced(): void }) => session.preview("big.jsonl", controls, (p) => progressed.push(p));

  async function previousRun() {
    const text = widened(await exported(calculator), 5);
    const { model, scenario } = buildRun(await readJsonl(new Blob([text])));
    session.show({ model, scenario: scenario as never, kind: "imported" });
    selection.set({ selected: 1, selectedTurn: 0 });
    return { model, text };
  }

  it("sets the current run aside while previewing and puts it back as it was", async () => {
    const { model: before, text } = await previousRun();
    const shownBefore: Shown = session.state;
    let stopped = 0;
    let replaced = 0;
    const preview = new PreviewImport(target({ stop: () => stopped++, replaced: () => replaced++ }), { sliceMs: 0, yieldToPage: nextTurn });
    await readInto(preview, text, 64);
    const during = session.state;
    expect(during.model).toBe(preview.model);
    expect(during.kind).toBe("preview");
    expect(during.status).toBe("idle"); // not finished: not saved, not exported
    expect(during.scenario).toBeNull(); // nothing to fork from
    expect(during.preview).toMatchObject({ name: "big.jsonl", phase: "reading" });
    preview.progress({ linesRead: 3, bytesRead: 30, totalBytes: 60, phase: "reading", badLines: 0 });
    expect(progressed.at(-1)).toMatchObject({ linesRead: 3, bytesRead: 30, totalBytes: 60 });
    preview.progress({ linesRead: 6, bytesRead: 60, totalBytes: 60, phase: "problems", badLines: 2 });
    expect(session.state.preview).toMatchObject({ phase: "problems", badLines: 2 });
    during.preview!.stop();
    expect(stopped).toBe(1);

    preview.discard();
    expect(session.state).toBe(shownBefore);
    expect(session.state.model).toBe(before);
    expect(selection.current).toEqual({ selected: 1, selectedTurn: 0 });
    expect(replaced).toBe(0);
  });

  it("an imported preview becomes the current run as it is (the same model, the selection kept)", async () => {
    const { text } = await previousRun();
    const preview = new PreviewImport(target({ stop: () => undefined, replaced: () => undefined }), { sliceMs: 0, yieldToPage: nextTurn });
    const read = await readInto(preview, text, 64);
    selection.set({ selected: 2, selectedTurn: null });
    const { model, scenario } = preview.keep(read)!;
    session.show({ model, scenario: scenario as never, kind: "imported" });
    const after = session.state;
    expect(after.preview).toBeNull();
    expect(after.model).toBe(preview.model);
    expect(after.status).toBe("finished");
    expect(selection.current.selected).toBe(2);
    expect(after.scenario).toEqual(scenario);
    // Nothing comes back later.
    preview.discard();
    expect(session.state.model).toBe(preview.model);
  });

  it("another run shown replaces the preview: it ends (the reading stops), the run set aside does not come back", async () => {
    const { text } = await previousRun();
    let replaced = 0;
    const preview = new PreviewImport(target({ stop: () => undefined, replaced: () => (replaced++, preview.supersede()) }), {
      sliceMs: 0,
      yieldToPage: nextTurn,
    });
    await readInto(preview, text, 64);
    const other = buildRun(await readJsonl(new Blob([text]))).model;
    session.show({ model: other, scenario: null, kind: "imported" });
    expect(replaced).toBe(1);
    expect(preview.state).toBe("discarded");
    expect(session.state).toMatchObject({ model: other, preview: null, status: "finished" });
  });

  it("no preview while a run is live (it would have to stop): the import then waits for the whole file", async () => {
    const { text } = await previousRun();
    session.start(parseScenario(calculator));
    const preview = new PreviewImport(target({ stop: () => undefined, replaced: () => undefined }), { sliceMs: 0, yieldToPage: nextTurn });
    await readInto(preview, text, 64);
    expect(preview.state).toBe("refused");
    expect(session.state.preview).toBeNull();
  });
});
