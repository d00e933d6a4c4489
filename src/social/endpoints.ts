import { PROVIDERS } from './providers/index.js';
import { microsoftTenantEndpoints } from './providers/microsoft.js';
import type { Endpoints, ProviderId, ProviderSettings } from './settings.js';

/** A provider's URLs: its defaults, Microsoft's tenant, then the configured overrides. */
export function endpointsFor(id: ProviderId, settings: ProviderSettings): Endpoints {
  return {
    ...PROVIDERS[id].defaultEndpoints,
    ...(id === 'microsoft' && settings.tenant ? microsoftTenantEndpoints(settings.tenant) : {}),
    ...settings.endpoints,
  };
}
