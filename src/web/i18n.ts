import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The languages the pages speak; the first is the fallback. */
export const WEB_LANGS = ['en', 'es'] as const;
export type WebLang = (typeof WEB_LANGS)[number];

export type Translate = (key: string, vars?: Record<string, string | number>) => string;

/** templates/web/i18n/<lang>.json, flat keys; a key missing in a language falls back to English. */
export function loadStrings(dir: string): Record<WebLang, Record<string, string>> {
  const out = {} as Record<WebLang, Record<string, string>>;
  for (const lang of WEB_LANGS) out[lang] = JSON.parse(readFileSync(path.join(dir, `${lang}.json`), 'utf8')) as Record<string, string>;
  return out;
}

export function translator(strings: Record<WebLang, Record<string, string>>, lang: WebLang): Translate {
  return (key, vars) => {
    const s = strings[lang][key] ?? strings.en[key];
    if (s === undefined) throw new Error(`no web string ${key}`);
    return vars ? s.replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m)) : s;
  };
}

const asLang = (v: string | null | undefined): WebLang | null => {
  const base = (v ?? '').trim().toLowerCase().split(/[-_]/)[0];
  return (WEB_LANGS as readonly string[]).includes(base) ? (base as WebLang) : null;
};

/** The signed-in user's `lang` when the pages speak it, else the best of Accept-Language, else English. */
export function pickLang(userLang: string | null | undefined, acceptLanguage: string | undefined): WebLang {
  const own = asLang(userLang);
  if (own) return own;
  const ranked = (acceptLanguage ?? '')
    .slice(0, 512)
    .split(',')
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { lang: asLang(tag), q: q === undefined ? 1 : Number(q), i };
    })
    .filter((x) => x.lang && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  return ranked[0]?.lang ?? 'en';
}
