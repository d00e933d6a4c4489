/**
 * The part of oidc-provider (panva; it ships no types) that Gatehouse's provider (src/oidc) and the
 * tests' stand-in identity provider (test/helpers/oidc-server.ts) use. Loose on purpose: the
 * configuration is checked by the library at construction.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  /* eslint-disable @typescript-eslint/no-explicit-any -- an untyped library: its objects are described as loosely as it checks them itself */
  export interface InteractionDetails {
    uid: string;
    iat?: number;
    exp: number;
    returnTo: string;
    grantId?: string;
    session?: { accountId?: string; uid?: string; cookie?: string };
    params: Record<string, any>;
    prompt: { name: string; reasons: string[]; details: Record<string, any> };
    lastSubmission?: Record<string, any>;
    result?: Record<string, any>;
  }

  export class Check {
    constructor(reason: string, description: string, check: (ctx: any) => boolean | Promise<boolean>);
    static REQUEST_PROMPT: boolean;
    static NO_NEED_TO_PROMPT: boolean;
  }

  export const interactionPolicy: {
    Check: typeof Check;
    base(): { get(name: string): { checks: { add(check: Check, index?: number): void } } | undefined } & any[];
  };

  export const errors: Record<string, new (description?: string) => Error>;

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    /** The request being served (oidc-provider keeps it in an AsyncLocalStorage), or undefined outside one. */
    static readonly ctx: any;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    proxy: boolean;
    Client: any;
    Grant: any;
    Session: any;
    AccessToken: any;
    RefreshToken: any;
    use(middleware: (ctx: any, next: () => Promise<void>) => Promise<void>): void;
    on(event: string, listener: (...args: any[]) => void): this;
    emit(event: string, ...args: any[]): boolean;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      opts?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      opts?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
  }
}
