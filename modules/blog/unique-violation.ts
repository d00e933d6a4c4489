import { UniqueConstraintError } from 'sequelize';

/** A unique index refused the row (a concurrent writer got there first). */
export const isUniqueViolation = (err: unknown) => err instanceof UniqueConstraintError;
