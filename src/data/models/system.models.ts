import { DataTypes, Model, type ModelStatic, type Sequelize } from 'sequelize';

/** Core's tables without a repository: module state, settings, job runs, one-time tokens. */
export interface SystemModels {
  ModuleState: ModelStatic<Model>;
  Setting: ModelStatic<Model>;
  JobRun: ModelStatic<Model>;
  AuthToken: ModelStatic<Model>;
}

export function defineSystemModels(sequelize: Sequelize): SystemModels {
  const ModuleState = sequelize.define(
    'ModuleState',
    {
      module_id: { type: DataTypes.STRING(64), primaryKey: true },
      version: { type: DataTypes.STRING(32), allowNull: false },
      enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      info: DataTypes.JSON,
      installed_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    },
    { tableName: 'module_state', timestamps: false },
  );
  const Setting = sequelize.define(
    'Setting',
    {
      key: { type: DataTypes.STRING(128), primaryKey: true },
      value: DataTypes.JSON,
      updated_at: { type: DataTypes.DATE, allowNull: false },
    },
    { tableName: 'settings', timestamps: false },
  );
  const JobRun = sequelize.define(
    'JobRun',
    {
      run_key: { type: DataTypes.STRING(200), primaryKey: true },
      job: { type: DataTypes.STRING(64), allowNull: false },
      holder: { type: DataTypes.STRING(100), allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false },
      detail: DataTypes.STRING(500),
      started_at: { type: DataTypes.DATE, allowNull: false },
      finished_at: DataTypes.DATE,
    },
    { tableName: 'job_runs', timestamps: false },
  );
  const AuthToken = sequelize.define(
    'AuthToken',
    {
      id: { type: DataTypes.STRING(36), primaryKey: true },
      kind: { type: DataTypes.STRING(32), allowNull: false },
      user_id: DataTypes.STRING(36),
      token_hash: { type: DataTypes.STRING(64), allowNull: false },
      code_hash: DataTypes.STRING(64),
      channel: DataTypes.STRING(16),
      identifier: DataTypes.STRING(254),
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      meta: DataTypes.JSON,
      created_at: { type: DataTypes.DATE, allowNull: false },
      expires_at: { type: DataTypes.DATE, allowNull: false },
      used_at: DataTypes.DATE,
    },
    { tableName: 'auth_tokens', timestamps: false },
  );
  return { ModuleState, Setting, JobRun, AuthToken };
}
