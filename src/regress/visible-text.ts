/**
 * Text from a run (model output, environment text, error messages) made safe for a one-line report: control
 * characters and newlines shown as escapes, so none can move the cursor, recolour or rewrite a CI log's lines.
 */
export function visible(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) =>
    c === "\n" ? "\\n" : c === "\t" ? "\\t" : c === "\r" ? "\\r" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
