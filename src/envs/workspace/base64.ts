/** UTF-8 base64 without Node's Buffer, so the workspace runs in a Worker or a page too. */

export function utf8ToBase64(text: string): string {
  return bytesToBase64(new TextEncoder().encode(text));
}

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Decodes base64 (whitespace ignored, padding optional) to text; null when the input is not base64. */
export function base64ToUtf8(encoded: string): string | null {
  const compact = encoded.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.replace(/=+$/, "").length % 4 === 1) return null;
  const padded = compact.replace(/=+$/, "").padEnd(Math.ceil(compact.replace(/=+$/, "").length / 4) * 4, "=");
  const binary = atob(padded);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}
