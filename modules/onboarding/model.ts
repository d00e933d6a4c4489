import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';

const cache = new WeakMap<Sequelize, ModelStatic<Model>>();

/** The onboarding_profiles model, defined once per connection. */
export function onboardingModel(sequelize: Sequelize): ModelStatic<Model> {
  let m = cache.get(sequelize);
  if (!m) {
    m = sequelize.define(
      'OnboardingProfile',
      {
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
      },
      { tableName: 'onboarding_profiles', timestamps: false },
    );
    cache.set(sequelize, m);
  }
  return m;
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
