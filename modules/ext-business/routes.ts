import { defineRoute } from '../../src/module-api.js';
import { listCountries } from './service.js';

/** GET /api/v1/business/countries: the country codes biz_country accepts, for forms. */
export const countries = defineRoute({
  method: 'get',
  path: '/api/v1/business/countries',
  summary: 'List countries for business profiles',
  auth: 'public',
  module: 'ext-business',
  handler: () => ({ success: true, data: { countries: listCountries() } }),
});

export const routes = [countries];
