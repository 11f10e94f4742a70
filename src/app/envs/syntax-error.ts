/**
 * Where a module's syntax error is. A browser's dynamic import of a module that does not parse rejects with a bare
 * SyntaxError ("Unexpected token '}'"), no line or column: the module's author is told where, by parsing its text
 * with acorn (a standard JavaScript parser) once the import has failed.
 */

import { parse } from "acorn";

/**
 * `name:line:column: what` and the line with a caret under the place, or null when the text parses (the engine's
 * own message then stands: acorn and the engine may disagree on the newest syntax).
 */
export function locateSyntaxError(source: string, name: string): string | null {
  try {
    parse(source, { ecmaVersion: "latest", sourceType: "module", allowHashBang: true });
    return null;
  } catch (e) {
    const loc = (e as { loc?: { line: number; column: number } }).loc;
    if (!(e instanceof SyntaxError) || !loc) return null;
    const what = e.message.replace(/\s*\(\d+:\d+\)$/, "");
    const line = source.split(/\r\n|\r|\n/)[loc.line - 1] ?? "";
    return `${name}:${loc.line}:${loc.column + 1}: ${what}\n${line}\n${" ".repeat(loc.column)}^`;
  }
}
