import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { JsonText } from '../../src/http/respond.js';
import { sequence } from '../../src/http/sequence.js';

describe('JsonText', () => {
  it('when a JsonText ends up inside a plain value, then it serialises to its content', () => {
    expect(JSON.stringify({ a: new JsonText('{"b":[1,2]}') })).toBe('{"a":{"b":[1,2]}}');
  });
});

const req = {} as Request;
const res = {} as Response;
const run = (handlers: RequestHandler[]) =>
  new Promise<{ err: unknown; calls: string[] }>((resolve) => {
    const calls: string[] = [];
    const named = handlers.map((h, i) => ((rq: Request, rs: Response, nx: NextFunction) => (calls.push(`h${i}`), h(rq, rs, nx))) as RequestHandler);
    sequence(named)(req, res, (err?: unknown) => resolve({ err, calls }));
  });

describe('sequence', () => {
  it('when every handler calls next, then they run in order and the sequence continues once', async () => {
    expect(await run([(_q, _s, n) => n(), (_q, _s, n) => setTimeout(n, 1), (_q, _s, n) => n()])).toEqual({ err: undefined, calls: ['h0', 'h1', 'h2'] });
  });

  it('when a handler fails (next(err), a throw or a rejection), then the rest is skipped and the error goes on', async () => {
    const boom = new Error('boom');
    const rest: RequestHandler = (_q, _s, n) => n();
    expect(await run([(_q, _s, n) => n(boom), rest])).toEqual({ err: boom, calls: ['h0'] });
    expect(
      await run([
        () => {
          throw boom;
        },
        rest,
      ]),
    ).toEqual({ err: boom, calls: ['h0'] });
    expect(
      await run([
        async () => {
          throw boom;
        },
        rest,
      ]),
    ).toEqual({ err: boom, calls: ['h0'] });
  });

  it("when a handler calls next('router') or next('route'), then the sequence is left without an error", async () => {
    expect(await run([(_q, _s, n) => n('router'), (_q, _s, n) => n()])).toEqual({ err: undefined, calls: ['h0'] });
    expect(await run([(_q, _s, n) => n('route'), (_q, _s, n) => n()])).toEqual({ err: undefined, calls: ['h0'] });
  });
});
