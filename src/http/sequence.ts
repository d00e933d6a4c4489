import type { RequestHandler } from 'express';

/**
 * Middleware run in order as one Express layer. Each Express layer costs a path match, a params
 * merge and a try/catch wrapper per request; the app-wide middleware needs none of that, so it runs
 * here. Same contract as a router: `next(err)` leaves with the error, `next('route' | 'router')`
 * leaves without it, a rejected promise from an async handler is passed on as an error.
 */
export function sequence(handlers: readonly RequestHandler[]): RequestHandler {
  const list = [...handlers];
  return (req, res, done) => {
    let i = 0;
    const step = (err?: unknown): void => {
      if (err === 'route' || err === 'router') return done();
      if (err !== undefined && err !== null) return done(err);
      const handler = list[i++];
      if (!handler) return done();
      try {
        const out = handler(req, res, step);
        if (out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).catch(done);
      } catch (e) {
        done(e);
      }
    };
    step();
  };
}
