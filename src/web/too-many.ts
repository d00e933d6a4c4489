import type { Request } from 'express';
import type { Translate } from './i18n.js';
import { checkReturnTo } from './page-security.js';
import { withReturn } from './web-page.js';

/*
 * The hosted pages' 429: how long to wait (the answer's Retry-After, in words) and a link back to the
 * page the browser came from. A refused post is answered by the gate before its body is read, so the
 * page is found from the path (and a `return_to` in the query: the sign-in form posts it there too).
 */

/** Retry-After in words: seconds under a minute, else minutes (rounded up), hours from 90 minutes. */
export function waitText(t: Translate, retryAfterSec: number): string {
  const sec = Math.max(1, Math.ceil(retryAfterSec));
  if (sec < 60) return sec === 1 ? t('wait.second') : t('wait.seconds', { n: sec });
  const min = Math.ceil(sec / 60);
  if (min < 90) return min === 1 ? t('wait.minute') : t('wait.minutes', { n: min });
  const hours = Math.ceil(min / 60);
  return t('wait.hours', { n: hours });
}

/** The page a refused form post came from, by the post's path (page paths: web-router.ts). */
function formPage(path: string): string {
  if (path === '/register' || path === '/forgot-password') return path;
  if (path === '/account' || path.startsWith('/account/')) return '/account';
  const staff = /^\/admin\/(users\/[^/]+|modules|webhooks|blog)(?:\/|$)/.exec(path);
  if (staff) return `/admin/${staff[1]}`;
  if (path === '/admin' || path.startsWith('/admin/')) return '/admin';
  // The sign-in steps, sign-out, and the links' forms (reset, verify) lead back to signing in.
  return '/login';
}

/**
 * Where the 429 page's link goes: a refused page view is the page itself (tried again once the wait is
 * over); a refused post, the page of its form, keeping a checked `return_to` from the query.
 */
export function backLink(req: Request, config: Parameters<typeof checkReturnTo>[1]): string {
  if (req.method === 'GET' || req.method === 'HEAD') return req.originalUrl.startsWith('/') && !req.originalUrl.startsWith('//') ? req.originalUrl : '/login';
  const page = formPage(req.path);
  if (page.startsWith('/account') || page.startsWith('/admin')) return page;
  const rt = checkReturnTo(req.query.return_to, config);
  return withReturn(page, rt.ok ? rt.to : null);
}

/** The 429 page's text and link, in the request's language. */
export function tooManyMessage(t: Translate, req: Request, config: Parameters<typeof checkReturnTo>[1], retryAfterSec: number) {
  const href = backLink(req, config);
  return {
    title: t('error.rate_limited_title'),
    text: t('error.rate_limited_wait', { wait: waitText(t, retryAfterSec) }),
    tone: 'error' as const,
    link: { href, label: href.startsWith('/login') ? t('error.back_sign_in') : t('error.go_back') },
  };
}

/** The seconds a refusal (an AppError 429 with `retry_after`) asks to wait; at least one. */
export const retryAfterOf = (extra: Record<string, unknown> | undefined): number => Math.max(1, Number(extra?.retry_after) || 1);
