import { DataTypes, type Model, type ModelStatic } from 'sequelize';
import type { ModuleContext } from '../../src/module-api.js';

/** The onboarding_profiles model (the module's own table, through its context). */
export function onboardingModel(ctx: ModuleContext): ModelStatic<Model> {
  return ctx.db.model('OnboardingProfile', 'onboarding_profiles', {
    id: { type: DataTypes.STRING(36), primaryKey: true },
    user_id: { type: DataTypes.STRING(36), allowNull: false },
    status: { type: DataTypes.STRING(16), allowNull: false },
    step: DataTypes.STRING(32),
    completed_steps: DataTypes.JSON,
    skipped_steps: DataTypes.JSON,
    data: DataTypes.JSON,
    acquisition_source: DataTypes.STRING(200),
    acquisition_medium: DataTypes.STRING(200),
    acquisition_campaign: DataTypes.STRING(200),
    acquisition_referrer: DataTypes.STRING(500),
    acquisition_details: DataTypes.TEXT,
    acquisition_extra: DataTypes.JSON,
    team_size_range: DataTypes.STRING(32),
    started_at: DataTypes.DATE,
    completed_at: DataTypes.DATE,
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
}

/** Columns never returned by any read. */
export const WRITE_ONLY_COLUMNS = [
  'acquisition_source',
  'acquisition_medium',
  'acquisition_campaign',
  'acquisition_referrer',
  'acquisition_details',
  'acquisition_extra',
  'team_size_range',
] as const;
