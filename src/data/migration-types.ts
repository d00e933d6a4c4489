import type { QueryInterface, Sequelize, Transaction } from 'sequelize';

/** What a migration receives. Every query must pass `{ transaction }` so a dry-run can roll it all back. */
export interface MigrationContext {
  queryInterface: QueryInterface;
  sequelize: Sequelize;
  transaction: Transaction;
  dialect: 'sqlite' | 'postgres';
}

export interface MigrationDef {
  /** Sortable, unique within its source: `20261121-0900-create-users`. */
  name: string;
  up(ctx: MigrationContext): Promise<void>;
  down(ctx: MigrationContext): Promise<void>;
}

/** A named list of migrations: `core`, or a module id. */
export interface MigrationSource {
  id: string;
  migrations: MigrationDef[];
}
