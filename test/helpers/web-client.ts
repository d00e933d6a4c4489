/**
 * A browser-shaped HTTP client for the hosted pages without a browser: a cookie jar, form posts
 * (urlencoded), manual redirects, and the CSRF token read from the page it came with.
 */
export interface WebAnswer {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

export class WebClient {
  readonly jar = new Map<string, string>();
  /** Set-Cookie lines as the server wrote them, newest last (to check attributes). */
  readonly setCookies: string[] = [];
  constructor(
    readonly base: string,
    readonly headers: Record<string, string> = {},
  ) {}

  private cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      this.setCookies.push(line);
      const [pair, ...attrs] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      const expired = attrs.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a)) || value === '';
      if (expired) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  async request(
    method: string,
    path: string,
    opts: { form?: Record<string, string>; json?: unknown; headers?: Record<string, string> } = {},
  ): Promise<WebAnswer> {
    const headers: Record<string, string> = { accept: 'text/html,application/xhtml+xml', ...this.headers, ...opts.headers };
    const cookie = this.cookieHeader();
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (opts.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(opts.form).toString();
    } else if (opts.json !== undefined) {
      // As a page's script calls the API (passkey autofill on /login): same cookies, a JSON body.
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    const res = await fetch(this.base + path, { method, headers, body, redirect: 'manual' });
    this.keep(res);
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location') };
  }

  get(path: string, headers?: Record<string, string>) {
    return this.request('GET', path, { headers });
  }

  /** GETs `pagePath`, then posts `form` to `action` with the page's CSRF token (unless `csrf: false`). */
  async submit(pagePath: string, action: string, form: Record<string, string>, opts: { csrf?: boolean; headers?: Record<string, string> } = {}) {
    const page = await this.get(pagePath);
    const token = csrfIn(page.text);
    return this.request('POST', action, { form: opts.csrf === false ? form : { _csrf: token, ...form }, headers: opts.headers });
  }
}

/** The CSRF token a page's form carries. */
export function csrfIn(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no CSRF field on the page');
  return m[1];
}
