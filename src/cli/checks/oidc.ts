import { checkRedirectUri } from '../../oidc/clients.js';
import { fail, ok, warn, type Check } from './check.js';

/**
 * The OpenID provider: an https issuer (oidc-provider and relying parties refuse plain http outside
 * loopback), signing keys that open with this server's secret, every client's redirect URIs, and the
 * clients registered without PKCE (a stolen code is redeemable by whoever holds their secret).
 */
export const oidcCheck: Check = {
  id: 'oidc',
  title: 'OpenID Connect provider',
  category: 'storage',
  needs: ['database', 'migrations'],
  async run(ctx) {
    const app = await ctx.app();
    const oidc = app.services.oidc;
    if (!oidc.enabled) return ok('switched off (OIDC_ENABLED=false)');
    const clients = await oidc.clients.list();
    const problems: string[] = [];
    for (const c of clients) {
      for (const uri of [...c.redirect_uris, ...c.post_logout_redirect_uris]) {
        const p = checkRedirectUri(uri);
        if (p) problems.push(`${c.client_id} (${c.name}): ${uri} ${p}`);
      }
      if (c.redirect_uris.length === 0) problems.push(`${c.client_id} (${c.name}): no redirect URI`);
    }
    if (problems.length) return fail(problems.join('; '), 'fix them with gatehouse oidc client update ID --redirect-uri URI');
    try {
      const store = oidc.keys();
      await store.ensure();
      await store.load();
    } catch (err) {
      return fail(
        `signing keys: ${(err as Error).message}`,
        'the server secret (COOKIE_SECRET) changed? restore it, or delete the oidc_keys rows and restart (clients must refetch the JWKS)',
      );
    }
    const issuer = new URL(oidc.issuer);
    const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(issuer.hostname);
    if (clients.length && issuer.protocol !== 'https:' && !loopback) {
      return warn(`issuer ${oidc.issuer} is not https`, 'set PUBLIC_URL to the https address your apps reach Gatehouse at');
    }
    const withoutPkce = clients.filter((c) => !c.pkce_required);
    if (withoutPkce.length) {
      return warn(
        `${withoutPkce.length} client${withoutPkce.length === 1 ? '' : 's'} without PKCE: ${withoutPkce.map((c) => `${c.client_id} (${c.name})`).join(', ')}`,
        'once the app sends a PKCE challenge (S256): gatehouse oidc client update ID --pkce',
      );
    }
    return ok(
      clients.length
        ? `${clients.length} client${clients.length === 1 ? '' : 's'}, keys ready, issuer ${oidc.issuer}`
        : 'no client registered (gatehouse oidc client add)',
    );
  },
};
