import { describe, expect, it } from "vitest";
import { compareScenario, toJsonl } from "./compare.js";
import { escapeHtml, renderHtmlReport } from "./report-html.js";
import { renderTextReport, summaryLine } from "./report-text.js";

const hostile = `<script>alert("x")</script><img src=x onerror='alert(1)'> & <!-- -->`;

function regressed(runText: string, goldenText: string) {
  const s = (content: string) => ({ idx: 7, message_log: [{ role: "user", content: "p" }, { role: "assistant", content }] });
  return compareScenario("evil<name>", { samplesJsonl: toJsonl([s(runText)]), metrics: { "m<x>": 2 } }, { samplesJsonl: toJsonl([s(goldenText)]), metrics: { "m<x>": 1 } });
}

describe("escapeHtml", () => {
  it("escapes every character that could open markup or an attribute", () => {
    expect(escapeHtml(`<a href="x" title='y'>&amp;</a>`)).toBe("&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;");
  });
});

describe("the HTML report", () => {
  it("inserts hostile model and environment text as text: no tags, no scripts", () => {
    const html = renderHtmlReport([regressed(`${hostile} run`, `${hostile} gold`)], `title <b>`);
    expect(html).not.toMatch(/<script|<img|<!-- -->|<b>/i);
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(html).toContain("evil&lt;name&gt;");
    expect(html).toContain("m&lt;x&gt;");
    // The first differing character is marked.
    expect(html).toContain("<mark>r</mark>");
    expect(html).toContain("<mark>g</mark>");
  });
});

describe("the text report", () => {
  it("names the scenario, sample, turn and character, with a marker under the difference", () => {
    const c = regressed("move left", "move down");
    expect(summaryLine(c)).toBe("REGRESSED  evil<name>: text differs: sample idx 7, turn 0, message 1 (assistant), content at char 5; 1 metric beyond tolerance");
    const text = renderTextReport([c]);
    const lines = text.split("\n");
    const golden = lines.findIndex((l) => l.includes("golden: move down"));
    expect(lines[golden + 1]!.indexOf("^")).toBe(lines[golden]!.lastIndexOf("d"));
    expect(text).toContain("metric m<x>: golden 1, run 2");
  });

  it("shows newlines visibly so each window stays on one line", () => {
    const text = renderTextReport([regressed("a\nb", "a\nc")]);
    expect(text).toContain("golden: a\\nc");
  });

  it("never passes a run's control characters to the log: an extra message's escapes cannot fake a verdict", () => {
    const s = (log: object[]) => ({ idx: 0, message_log: [{ role: "user", content: "q", token_ids: [1] }, ...log] });
    const forged = "\u001b[1A\u001b[2K\u001b[32mok         scenario-x\u001b[0m\u009b2J";
    const extra = compareScenario("scenario-x", { samplesJsonl: toJsonl([s([{ role: "assistant", content: forged, token_ids: [2] }])]), metrics: {} }, { samplesJsonl: toJsonl([s([])]), metrics: {} });
    const text = renderTextReport([extra]);
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(text).toContain("\\u001b[1A");
  });
});
