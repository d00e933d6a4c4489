import { DataTypes, Model, type ModelStatic, type Sequelize } from 'sequelize';

export function defineSessionModel(sequelize: Sequelize): ModelStatic<Model> {
  return sequelize.define(
    'Session',
    {
      id: { type: DataTypes.STRING(36), primaryKey: true },
      token_hash: { type: DataTypes.STRING(64), allowNull: false },
      session_prefix: { type: DataTypes.STRING(16), allowNull: false },
      user_id: { type: DataTypes.STRING(36), allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'active' },
      ip_address: DataTypes.STRING(64),
      user_agent: DataTypes.STRING(512),
      user_device: DataTypes.STRING(100),
      device_id: DataTypes.STRING(128),
      two_factor_verified: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      sign_in_method: { type: DataTypes.STRING(40), allowNull: true },
      amr: { type: DataTypes.STRING(100), allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      signed_in_at: { type: DataTypes.DATE, allowNull: true },
      last_used_at: { type: DataTypes.DATE, allowNull: false },
      expires_at: { type: DataTypes.DATE, allowNull: false },
    },
    { tableName: 'sessions', timestamps: false },
  );
}
