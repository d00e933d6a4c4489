import { describe, expectTypeOf, it } from 'vitest';
import { defineModule, type ModuleContext, type SessionRecord, type TwoFactorMethodsPayload, type UserRecord } from '../../src/module-api.js';

// Type-level: `npm run typecheck` compiles this file; a handler typed from the wrong event, or an `any`
// payload, breaks the build (each @ts-expect-error must find its error). The runtime part only defines.
const base = { id: 'typed', version: '1.0.0', description: 'hook types' } as const;

describe('manifest hook handlers are typed from the hook catalogue', () => {
  it('gives a catalogue event its payload, a module-own event a record, and refuses a wrong payload', () => {
    defineModule({
      ...base,
      hooks: [
        {
          event: 'auth.login',
          when: (p) => p.method === 'password',
          handler: (payload, ctx) => {
            expectTypeOf(payload.user).toEqualTypeOf<UserRecord>();
            expectTypeOf(payload.session).toEqualTypeOf<SessionRecord>();
            expectTypeOf(ctx).toEqualTypeOf<ModuleContext>();
          },
        },
        { event: 'user.erased', handler: (p) => void expectTypeOf(p).toEqualTypeOf<{ user_id: string }>() },
        { event: 'auth.two_factor.methods', handler: (p) => void expectTypeOf(p).toEqualTypeOf<TwoFactorMethodsPayload>() },
        { event: 'typed.own', handler: (p) => void expectTypeOf(p).toEqualTypeOf<Record<string, unknown>>() },
        {
          event: 'user.erased',
          // @ts-expect-error user.erased carries user_id, not a user
          handler: (p) => void p.user.id,
        },
        {
          event: 'auth.registered',
          // @ts-expect-error the payload is typed, not any
          handler: (p) => void p.nothing.here,
        },
      ],
    });
  });

  it('checks a named handler against its event', () => {
    const onErased = (p: { user_id: string }) => void p.user_id;
    defineModule({ ...base, hooks: [{ event: 'user.erased', handler: onErased }] });
    // @ts-expect-error auth.login's payload has no user_id
    defineModule({ ...base, hooks: [{ event: 'auth.login', handler: onErased }] });
  });
});
