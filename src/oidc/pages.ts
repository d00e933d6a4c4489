import type { IncomingMessage } from 'node:http';

/** A page the provider sends: its HTML and the Content-Security-Policy made with its nonce. */
export interface OidcPage {
  html: string;
  csp: string;
}

export type SourceCtx = {
  body: string;
  type: string;
  req: IncomingMessage;
  set(name: string, value: string): void;
  oidc: { client?: { clientName?: string; keep_session_on_logout?: boolean } };
};

/** Sends a page from one of oidc-provider's sources, with the page's own policy in place of the API's (set by the HTTP side). */
export function sendPage(ctx: SourceCtx, page: OidcPage): void {
  ctx.set('Content-Security-Policy', page.csp);
  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page.html;
}
