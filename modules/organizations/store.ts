import { DataTypes, type Model, type ModelStatic } from 'sequelize';
import type { ModuleContext } from '../../src/module-api.js';

export const TABLES = ['organizations', 'organization_members', 'organization_roles', 'organization_invitations'];

const id = { type: DataTypes.STRING(36), primaryKey: true };
const str = (n: number) => ({ type: DataTypes.STRING(n), allowNull: false });

export const orgs = (ctx: ModuleContext): ModelStatic<Model> =>
  ctx.db.model('Organization', 'organizations', {
    id,
    slug: str(63),
    name: str(200),
    logo: DataTypes.STRING(2000),
    metadata: DataTypes.JSON,
    created_at: DataTypes.DATE,
    updated_at: DataTypes.DATE,
  });

export const members = (ctx: ModuleContext): ModelStatic<Model> =>
  ctx.db.model('OrganizationMember', 'organization_members', {
    id,
    organization_id: str(36),
    user_id: str(36),
    role: str(64),
    created_at: DataTypes.DATE,
    updated_at: DataTypes.DATE,
  });

export const roles = (ctx: ModuleContext): ModelStatic<Model> =>
  ctx.db.model('OrganizationRole', 'organization_roles', {
    id,
    organization_id: str(36),
    name: str(64),
    permissions: DataTypes.JSON,
    created_at: DataTypes.DATE,
    updated_at: DataTypes.DATE,
  });

export const invitations = (ctx: ModuleContext): ModelStatic<Model> =>
  ctx.db.model('OrganizationInvitation', 'organization_invitations', {
    id,
    organization_id: str(36),
    email: str(254),
    role: str(64),
    token_hash: str(64),
    invited_by: DataTypes.STRING(36),
    expires_at: DataTypes.DATE,
    accepted_at: DataTypes.DATE,
    accepted_by: DataTypes.STRING(36),
    revoked_at: DataTypes.DATE,
    created_at: DataTypes.DATE,
  });

export interface OrgRow {
  id: string;
  slug: string;
  name: string;
  logo: string | null;
  metadata: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

export interface MemberRow {
  id: string;
  organization_id: string;
  user_id: string;
  role: string;
  created_at: Date;
  updated_at: Date;
}

export const plain = <T>(m: Model): T => m.get({ plain: true }) as T;

/** JSON columns come back as text on some drivers. */
export function jsonOf<T>(v: unknown, fallback: T): T {
  if (typeof v === 'string') {
    try {
      return JSON.parse(v) as T;
    } catch {
      return fallback;
    }
  }
  return (v ?? fallback) as T;
}

const iso = (v: unknown) => new Date(v as string).toISOString();

/** The organization as answers show it. */
export function orgView(o: OrgRow) {
  return {
    id: o.id,
    slug: o.slug,
    name: o.name,
    logo: o.logo ?? null,
    metadata: jsonOf<Record<string, unknown>>(o.metadata, {}),
    created_at: iso(o.created_at),
    updated_at: iso(o.updated_at),
  };
}
