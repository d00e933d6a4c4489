import type { Sequelize } from 'sequelize';
import type { AuthTokenRepository } from '../data/repositories/auth-token-repository.js';
import type { Config } from '../config/schema.js';
import { createAccountRepository, type AccountRepository } from './account-repository.js';
import { createSealer, type Sealer } from './crypto.js';
import { createFlowStore, type FlowStore } from './flow-store.js';

/** What social login stores: linked accounts, sign-ins in flight, sealed provider tokens. */
export interface SocialStores {
  accounts: AccountRepository;
  /** Null without a server secret: flows are sealed with a key derived from it. */
  flows: FlowStore | null;
  tokenSealer: Sealer | null;
}

/**
 * Social login's stores over the database, sealed with keys derived from the server's secret
 * (COOKIE_SECRET, else BRIDGE_VALIDATION_SECRET). Built by core's builder (app-context.ts), which
 * hands them to the social service.
 */
export function createSocialStores(
  config: Pick<Config, 'cookieSecret' | 'bridgeSecret'>,
  sequelize: Sequelize,
  authTokens: AuthTokenRepository,
  clock: () => Date,
): SocialStores {
  const secret = config.cookieSecret ?? config.bridgeSecret ?? null;
  const flowSealer = secret ? createSealer(secret, 'social-flow') : null;
  return {
    accounts: createAccountRepository(sequelize),
    flows: flowSealer ? createFlowStore(authTokens, flowSealer, clock) : null,
    tokenSealer: secret ? createSealer(secret, 'social-provider-tokens') : null,
  };
}
