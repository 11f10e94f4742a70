/**
 * The tokenizer a run that names none is read with (an imported dump's token ids, a text policy's run without the
 * `tokenizer` key): a built-in, a hub id or a picked folder, chosen here and loaded alone (its tokenizer files, no
 * weights) in the rollout worker. With it the token view names the run's tokens in their own vocabulary, and the
 * template check and the batch's drift count use its chat template. A hub is contacted only when Load is pressed,
 * and the button names it.
 */

import { useState } from "react";
import { DEFAULT_HUB_HOST, resolveModelSource } from "../../../policy/llm/model-source.js";
import type { TokenizerFiles } from "../../worker/protocol.js";

export interface RunTokenizerPickerProps {
  /** The tokenizer this run is read with now (null: the byte-level one). */
  chosen: string | null;
  /** The hub a hub id is loaded from (the set-up's Hub address; empty: huggingface.co). */
  hubAddress: string;
  /** Loads the tokenizer alone; resolves once the run's views may use it. */
  load(spec: string, from: TokenizerFiles): Promise<void>;
  /** Back to the byte-level reading. */
  clear(): void;
}

type Phase = { loading: string | null; error: string | null };

const hubHost = (address: string) => {
  try {
    return new URL(address.trim() || DEFAULT_HUB_HOST).host;
  } catch {
    return address;
  }
};

export function RunTokenizerPicker({ chosen, hubAddress, load, clear }: RunTokenizerPickerProps) {
  const [spec, setSpec] = useState("");
  const [phase, setPhase] = useState<Phase>({ loading: null, error: null });
  const start = (name: string, from: TokenizerFiles) => {
    setPhase({ loading: name, error: null });
    load(name, from).then(
      () => setPhase({ loading: null, error: null }),
      (e: unknown) => setPhase({ loading: null, error: `could not load the tokenizer of ${name}: ${e instanceof Error ? e.message : String(e)}` }),
    );
  };
  const typed = spec.trim();
  let kind: string | null = null;
  let typedError: string | null = null;
  if (typed) {
    try {
      const source = resolveModelSource(typed);
      if (source.kind === "local") typedError = "a folder is picked with the folder button; type a built-in (builtin:tiny-qwen3) or a hub id (org/name)";
      else kind = source.kind;
    } catch (e) {
      typedError = (e as Error).message;
    }
  }
  const hubFiles: TokenizerFiles = hubAddress.trim() ? { remoteHost: hubAddress.trim().replace(/\/?$/, "/") } : {};
  return (
    <div className="tk-run-tokenizer" data-testid="run-tokenizer">
      <p>
        {chosen ? (
          <>
            Token ids read with the tokenizer of <code data-testid="run-tokenizer-chosen">{chosen}</code> (chosen here; this run names none).{" "}
            <button type="button" className="link" onClick={clear}>
              read them as bytes again
            </button>
          </>
        ) : (
          <>This run names no tokenizer: its token ids are read as the byte-level vocabulary's. A dump's ids need the tokenizer it was made with:</>
        )}
      </p>
      <form
        className="tk-run-tokenizer-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (kind && !phase.loading) start(typed, kind === "hub" ? hubFiles : {});
        }}
      >
        <input
          aria-label="Run tokenizer"
          placeholder="builtin:tiny-qwen3, or a hub id: Qwen/Qwen3-0.6B"
          value={spec}
          onChange={(e) => setSpec(e.target.value)}
          aria-invalid={typedError ? true : undefined}
        />{" "}
        <button type="submit" data-testid="run-tokenizer-load" disabled={!kind || phase.loading !== null}>
          {kind === "hub" ? `load from ${hubHost(hubAddress)}` : "load"}
        </button>{" "}
        <label className="tk-run-tokenizer-folder">
          or a folder{" "}
          <input
            aria-label="Run tokenizer folder"
            type="file"
            // Non-standard, but every current browser supports it for picking folders.
            webkitdirectory=""
            disabled={phase.loading !== null}
            onChange={(e) => {
              const files = [...(e.target.files ?? [])];
              if (!files.length) return;
              const name = files[0]!.webkitRelativePath.split("/")[0] || "tokenizer";
              // Paths relative to the picked folder, as transformers.js asks for them.
              start(`local:${name}`, { localFiles: new Map(files.map((f) => [f.webkitRelativePath.split("/").slice(1).join("/"), f])) });
            }}
          />
        </label>
      </form>
      {typedError && <p className="hint" data-testid="run-tokenizer-invalid">{typedError}</p>}
      {phase.loading && <p className="hint">loading the tokenizer of {phase.loading} (its tokenizer files, not the model)…</p>}
      {phase.error && (
        <p className="tk-range-trained" data-testid="run-tokenizer-error">
          {phase.error}
        </p>
      )}
    </div>
  );
}
