import https from 'node:https';
import { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import { checkedAddresses, parseWebhookUrl, pinnedLookup } from '../webhooks/webhook-address.js';

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, oidc-provider's
 * `clientIdMetadataDocument`, behind OIDC_CLIENT_METADATA_DOCUMENTS): an agent or MCP client names itself
 * by an https URL, and the provider fetches the JSON document there as its registration. oidc-provider
 * checks the document (its `client_id` is the URL, no shared secret, https URIs), keeps it in its cache
 * (the answer's max-age, 30 s to a day) and limits it to 5 kB; this file decides who may come in that way
 * and carries every fetch the provider makes to the webhook address rules.
 */

/** The most any fetch of the provider may take, the address lookup included (oidc-provider's own 2.5 s applies too, whichever ends first). */
export const FETCH_TIMEOUT_MS = 5000;
/** The document's size limit (oidc-provider's default, set here so it stays). */
export const DOCUMENT_LIMIT = 5 * 1024;

/** Gatehouse's own client properties: set only by `gatehouse oidc client`, never by a document. */
const GATEHOUSE_PROPERTIES = ['first_party', 'keep_session_on_logout', 'pkce_required', 'allowed_resources'] as const;
/** Such a client signs a user in; the device and client-credentials grants stay for registered clients. */
const GRANTS = new Set(['authorization_code', 'refresh_token']);

export interface OutboundOptions {
  /** WEBHOOK_ALLOW_PRIVATE_URLS: a host resolving to a loopback, private or link-local address may be fetched. */
  allowPrivate: boolean;
  /** Certificates (PEM) trusted besides the system's: only tests set it (a self-signed document host). */
  extraCa?: string;
}

type FetchInit = { method?: string; headers?: Headers; signal?: AbortSignal };

/**
 * oidc-provider's `fetch` hook: the URL checked as a webhook's is (https only, no credentials, every
 * resolved address public unless WEBHOOK_ALLOW_PRIVATE_URLS), the connection made to the very addresses
 * checked (`pinnedLookup`: a second resolution cannot point it elsewhere), redirects never followed (a 3xx
 * comes back as is and oidc-provider refuses it), at most FETCH_TIMEOUT_MS for the whole exchange. The
 * body is handed back as a stream; oidc-provider stops reading it past its size limit.
 */
export function outboundFetch(opts: OutboundOptions) {
  const ca = opts.extraCa ? [...rootCertificates, opts.extraCa] : undefined;
  return async (href: string, init: FetchInit = {}): Promise<Response> => {
    const deadline = AbortSignal.timeout(FETCH_TIMEOUT_MS);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    const policy = { allowHttp: false, allowPrivate: opts.allowPrivate };
    const url = parseWebhookUrl(href, policy);
    const addrs = await Promise.race([
      checkedAddresses(url, policy),
      new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('timed out resolving the address')), { once: true })),
    ]);
    const headers: Record<string, string> = {};
    init.headers?.forEach((v, k) => {
      if (v) headers[k] = v;
    });
    return new Promise<Response>((resolve, reject) => {
      const req = https.request(url, { method: init.method ?? 'GET', headers, lookup: pinnedLookup(addrs), signal, agent: false, ca }, (res) => {
        const status = res.statusCode ?? 0;
        const answer = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) answer.set(k, Array.isArray(v) ? v.join(', ') : v);
        if (status !== 200) {
          // Nothing of a refused answer is read (a redirect is not followed: its status is the answer).
          res.destroy();
          resolve(new Response(null, { status: status >= 200 && status <= 599 && status !== 204 && status !== 304 ? status : 502, headers: answer }));
          return;
        }
        resolve(new Response(Readable.toWeb(res) as ReadableStream, { status, headers: answer }));
      });
      req.on('error', reject);
      req.end();
    });
  };
}

/**
 * The `clientIdMetadataDocument` feature: off unless OIDC_CLIENT_METADATA_DOCUMENTS. A document may not
 * give itself Gatehouse's own properties (first-party, no PKCE, registered APIs, keeping the session on
 * logout): such a client is always third-party (the consent page every time), PKCE-bound, allowed no
 * registered API, and its grants are the authorization code and the refresh token only. Its token
 * authentication is what oidc-provider leaves it: `none`, or a key-based method the provider offers.
 */
export function clientMetadataFeature(enabled: boolean) {
  return {
    enabled,
    ack: 'draft-02',
    allowClient: async (_ctx: unknown, client: Record<string, unknown> & { grantTypes?: string[] }) =>
      GATEHOUSE_PROPERTIES.every((p) => client[p] === undefined) && (client.grantTypes ?? []).every((g) => GRANTS.has(g)),
  };
}

/** The provider's configuration for it: the feature, the fetch hook, the document's size limit. */
export function clientMetadataConfig(enabled: boolean, outbound: OutboundOptions) {
  return {
    fetch: outboundFetch(outbound),
    fetchResponseBodyLimits: { 'client_id metadata document': DOCUMENT_LIMIT },
    feature: clientMetadataFeature(enabled),
  };
}

/**
 * The name the consent page shows: a registered client's name; for a client from a metadata document, its
 * self-chosen name followed by the host that serves the document (the name alone could claim anything).
 */
export function consentName(client: { clientName?: string; clientId: string; clientIdMetadataDocument?: boolean }): string {
  if (client.clientIdMetadataDocument !== true) return client.clientName ?? client.clientId;
  const host = new URL(client.clientId).host;
  return client.clientName ? `${client.clientName} (${host})` : host;
}
