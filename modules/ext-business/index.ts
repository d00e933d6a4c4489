import { defineModule } from '../../src/module-api.js';
import { addBusinessColumns } from './migrations/20261121-1000-add-business-columns.js';
import { routes } from './routes.js';
import { businessFields, eraseBusiness, exportBusiness } from './service.js';

/** Business profile fields on users (is_business, biz_*), accepted by PUT /auth/user/me once installed. */
export default defineModule({
  id: 'ext-business',
  version: '1.0.0',
  description: 'Business profile fields on users: is_business, biz_name, biz_country, biz_state, biz_position, biz_postal_code',
  migrations: [addBusinessColumns],
  routes,
  userFields: businessFields,
  exporters: [{ name: 'business-profile', run: exportBusiness }],
  erasers: [{ name: 'business-profile', run: eraseBusiness }],
});
