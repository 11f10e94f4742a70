/** Where the Node commands fetch a hub id's files from. */

/**
 * Hugging Face's `HF_ENDPOINT` (a mirror, or a stand-in hub) as transformers.js's `remoteHost`; unset: the hub
 * itself. Only ids a scenario or a command line names are fetched.
 */
export function hubEndpoint(): { remoteHost?: string } {
  const endpoint = process.env.HF_ENDPOINT;
  return endpoint ? { remoteHost: endpoint.endsWith("/") ? endpoint : `${endpoint}/` } : {};
}
