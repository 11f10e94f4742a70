/**
 * The run's configuration in the URL: `#scenario=<base64url JSON>` (opening such a link loads it) and `&run=1`
 * (the link reproduces the run: it starts at once with the same seed).
 */

export function encodeScenario(scenario: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(scenario));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function decodeScenario(encoded: string): unknown {
  const base64 = encoded.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))));
}

export function shareHash(scenario: unknown, autorun: boolean): string {
  return `#scenario=${encodeScenario(scenario)}${autorun ? "&run=1" : ""}`;
}

/** The scenario and autorun flag of a location hash, or null; a broken link gives an error message instead. */
export function readHash(hash: string): { scenario: unknown; autorun: boolean } | { error: string } | null {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const encoded = params.get("scenario");
  if (!encoded) return null;
  try {
    return { scenario: decodeScenario(encoded), autorun: params.get("run") === "1" };
  } catch (e) {
    return { error: `the link's scenario cannot be read: ${(e as Error).message}` };
  }
}
