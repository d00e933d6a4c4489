/**
 * A minimal browser for end-to-end OAuth flows over real HTTP: a cookie jar per host, redirects
 * followed by hand, and auto-submitting forms (Apple's form_post, an OpenID provider's pages) posted.
 * It stops at the first URL whose origin is in `stopAt` (the front-end, never fetched); `aliases` maps a
 * public origin to the test server answering for it (cookies are kept under the public host); `fill`
 * gives values for fields of forms it submits (a provider's login form).
 */
export interface Browser {
  /** Follows from `url` until a stop origin; returns the URL it stopped at (or the last answer). */
  go(url: string, init?: { method?: string; form?: Record<string, string>; headers?: Record<string, string> }): Promise<Landing>;
  cookies(host: string): Map<string, string>;
  setCookie(host: string, name: string, value: string): void;
  deleteCookie(host: string, name: string): void;
}

export interface Landing {
  /** Where it stopped: a front-end URL, or the URL of the last answer. */
  url: URL;
  /** Set when the last step was an answer, not a redirect to a stop origin. */
  status: number | null;
  text: string;
  json: any;
  headers: Headers | null;
  /** The form it was about to post to the stop origin (a form_post answer), if any. */
  form?: Record<string, string>;
}

export function createBrowser(stopAt: string[], aliases: Record<string, string> = {}, fill: Record<string, string> = {}): Browser {
  const jars = new Map<string, Map<string, string>>();
  const jar = (host: string) => {
    let j = jars.get(host);
    if (!j) jars.set(host, (j = new Map()));
    return j;
  };

  function store(host: string, res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && new Date(a.split('=')[1]!).getTime() < Date.now()));
      if (expired || value === '') jar(host).delete(name);
      else jar(host).set(name, value);
    }
  }

  async function go(start: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Landing> {
    let url = new URL(start);
    let method = init.method ?? 'GET';
    let form = init.form;
    for (let hop = 0; hop < 30; hop++) {
      if (stopAt.includes(url.origin)) return { url, status: null, text: '', json: null, headers: null, form };
      const headers: Record<string, string> = { ...(hop === 0 ? init.headers : {}) };
      const c = [...jar(url.host)].map(([k, v]) => `${k}=${v}`).join('; ');
      if (c) headers.cookie = c;
      let body: string | undefined;
      if (form) {
        body = new URLSearchParams(form).toString();
        headers['content-type'] = 'application/x-www-form-urlencoded';
      }
      // A public origin (PUBLIC_URL) served by a test server on another port.
      const real = aliases[url.origin] ? new URL(url.pathname + url.search, aliases[url.origin]) : url;
      const res = await fetch(real, { method, headers, body, redirect: 'manual' });
      store(url.host, res);
      const loc = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && loc) {
        url = new URL(loc, url);
        method = 'GET';
        form = undefined;
        continue;
      }
      const text = await res.text();
      const post = autoForm(text);
      // A browser submits a self-posting page whatever its status (form_post errors come as 400 pages).
      if (post) {
        url = new URL(post.action, url);
        method = 'POST';
        // Fields a person would type (an OpenID provider's login form), where the form has them.
        form = { ...post.fields, ...Object.fromEntries(Object.entries(fill).filter(([k]) => k in post.fields)) };
        continue;
      }
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { url, status: res.status, text, json, headers: res.headers };
    }
    throw new Error('too many redirects');
  }

  return {
    go,
    cookies: jar,
    setCookie: (host, name, value) => void jar(host).set(name, value),
    deleteCookie: (host, name) => void jar(host).delete(name),
  };
}

const decode = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#34;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#39;/g, "'");

/** A page whose form posts itself (form_post answers), or an OpenID provider's login/consent form. */
function autoForm(html: string): { action: string; fields: Record<string, string> } | null {
  const m =
    /<form[^>]*method="post"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(html) ??
    /<form[^>]*action="([^"]+)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!m) return null;
  const fields: Record<string, string> = {};
  for (const input of m[2]!.matchAll(/<input([^>]*)>/gi)) {
    const name = /name="([^"]*)"/.exec(input[1]!)?.[1];
    const value = /value="([^"]*)"/.exec(input[1]!)?.[1] ?? '';
    if (name) fields[decode(name)] = decode(value);
  }
  return { action: decode(m[1]!), fields };
}
