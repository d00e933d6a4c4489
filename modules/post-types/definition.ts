import { z } from 'zod';
import { AppError, badRequest, emailAddress } from '../../src/module-api.js';

/** What a post type definition is made of, how one is validated, and how a post's field values are checked. */

export const FIELD_TYPES = [
  'text',
  'textarea',
  'number',
  'boolean',
  'date',
  'datetime',
  'url',
  'email',
  'select',
  'multiselect',
  'image',
  'color',
  'json',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
const CHOICE_TYPES: readonly FieldType[] = ['select', 'multiselect'];
/** Kinds whose values are strings of bounded length (max_length applies). */
const TEXT_TYPES: readonly FieldType[] = ['text', 'textarea', 'url', 'email', 'image'];
const DEFAULT_MAX: Partial<Record<FieldType, number>> = { text: 500, textarea: 20_000, url: 2000, email: 254, image: 2000 };

export const BODY_FORMATS = ['markdown', 'html', 'plain'] as const;
export const VISIBILITIES = ['public', 'auth', 'private'] as const;
const RESERVED_KEYS = new Set(['reorder']);
const JSON_VALUE_MAX = 16_384;
const BEHAVIORS_MAX = 8_192;

export interface FieldDef {
  name: string;
  label: string;
  type: FieldType;
  required: boolean;
  options: string[];
  max_length: number | null;
  placeholder: string;
}

/** A type's behaviours as answered: the known ones (typed by their input schema) and any further keys. */
export type Behaviors = z.output<z.ZodObject<typeof knownBehaviors>> & { [further: string]: unknown };

/** A definition as stored and answered (the spec's "Post type definition"). */
export interface Definition {
  id: string;
  type_key: string;
  type_name: string;
  description: string;
  slug_prefix: string;
  field_schema: FieldDef[];
  behaviors: Behaviors;
  icon: string;
  color: string;
  is_active: boolean;
  is_built_in: boolean;
  sort_order: number;
  created_at: string;
  updated_at: string;
}

/** Created by the module's migration; they can be edited and switched off, never deleted. */
export const BUILT_IN_TYPES = [
  {
    type_key: 'post',
    type_name: 'Post',
    description: 'Blog posts: dated articles with comments, reactions and bookmarks.',
    slug_prefix: '',
    field_schema: [] as FieldDef[],
    behaviors: {} as Record<string, unknown>,
    icon: 'file-text',
    color: '#2563eb',
  },
  {
    type_key: 'page',
    type_name: 'Page',
    description: 'Standing pages (about, terms): no comments, reactions or bookmarks, never scheduled.',
    slug_prefix: 'pages',
    field_schema: [] as FieldDef[],
    behaviors: {
      enables_comments: false,
      enables_reactions: false,
      enables_bookmarks: false,
      enables_scheduling: false,
    },
    icon: 'file',
    color: '#64748b',
  },
];

const oneLine = (max: number) =>
  z
    .string()
    .trim()
    .max(max, `must be at most ${max} characters`)
    .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), 'must not contain control characters');

export const typeKey = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/, 'must be lower-case letters, digits and single hyphens, starting with a letter')
  .max(64, 'must be at most 64 characters')
  .refine((k) => !RESERVED_KEYS.has(k), 'is reserved');

const fieldDef = z
  .strictObject({
    name: z
      .string()
      .trim()
      .regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be lower-case letters, digits and underscores, starting with a letter (at most 64)'),
    label: oneLine(120).optional(),
    type: z.enum(FIELD_TYPES, { error: `must be one of ${FIELD_TYPES.join(', ')}` }),
    required: z.boolean().default(false),
    options: z.array(oneLine(200).min(1, 'must not be empty')).max(200).optional(),
    max_length: z.number().int().min(1).max(100_000).nullable().optional(),
    placeholder: oneLine(200).optional(),
  })
  .superRefine((f, ctx) => {
    if (CHOICE_TYPES.includes(f.type)) {
      if (!f.options?.length) ctx.addIssue({ code: 'custom', path: ['options'], message: `required (at least one) for type ${f.type}` });
      else if (new Set(f.options).size !== f.options.length) ctx.addIssue({ code: 'custom', path: ['options'], message: 'must not repeat a value' });
    } else if (f.options?.length) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: `only for select and multiselect, not ${f.type}` });
    }
    if (f.max_length != null && !TEXT_TYPES.includes(f.type)) {
      ctx.addIssue({ code: 'custom', path: ['max_length'], message: `only for ${TEXT_TYPES.join(', ')}, not ${f.type}` });
    }
  })
  .transform((f): FieldDef => ({
    name: f.name,
    label: f.label || f.name,
    type: f.type,
    required: f.required,
    options: CHOICE_TYPES.includes(f.type) ? (f.options ?? []) : [],
    max_length: f.max_length ?? null,
    placeholder: f.placeholder ?? '',
  }));

export const fieldSchema = z
  .array(fieldDef)
  .max(100, 'must have at most 100 fields')
  .superRefine((fields, ctx) => {
    const seen = new Set<string>();
    fields.forEach((f, i) => {
      if (seen.has(f.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${f.name}" is used by another field` });
      seen.add(f.name);
    });
  });

/**
 * Known behaviours are typed; further keys are kept as given (null removes one on update). A
 * definition stores only what it sets: the blog owns the defaults (its event blog.post_types.defaults),
 * which are laid under it when definitions are read.
 */
const knownBehaviors = {
  public_by_default: z.boolean(),
  default_visibility: z.enum(VISIBILITIES, { error: `must be one of ${VISIBILITIES.join(', ')} (a password needs a post of its own)` }).nullable(),
  enables_seo: z.boolean(),
  enables_comments: z.boolean(),
  enables_reactions: z.boolean(),
  enables_bookmarks: z.boolean(),
  enables_views: z.boolean(),
  enables_scheduling: z.boolean(),
  requires_approval: z.boolean(),
  allows_password_visibility: z.boolean(),
  allowed_body_formats: z
    .array(z.enum([...BODY_FORMATS, 'text'], { error: `must be among ${BODY_FORMATS.join(', ')}` }).transform((f) => (f === 'text' ? 'plain' : f)))
    .min(1, 'must allow at least one format')
    .transform((l) => [...new Set(l)]),
  max_per_author: z.number().int().min(1).max(1_000_000).nullable(),
};
const KNOWN_BEHAVIORS = new Set(Object.keys(knownBehaviors));
export const behaviorsInput = z
  .object(knownBehaviors)
  .partial()
  .catchall(z.unknown())
  .refine((b) => JSON.stringify(b).length <= BEHAVIORS_MAX, `must be at most ${BEHAVIORS_MAX} bytes of JSON`);

const slugPrefix = z
  .string()
  .trim()
  .toLowerCase()
  .transform((s) => s.replace(/^\/+|\/+$/g, ''))
  .pipe(
    z
      .string()
      .max(100, 'must be at most 100 characters')
      .regex(/^(?:[a-z0-9]+(?:-[a-z0-9]+)*(?:\/[a-z0-9]+(?:-[a-z0-9]+)*)*)?$/, 'must be path segments of lower-case letters, digits and hyphens'),
  );
const color = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?:#[0-9a-f]{3}|#[0-9a-f]{6})?$/, 'must be a hex colour such as #2563eb');

const editable = {
  type_name: oneLine(100).min(1, 'must not be empty'),
  description: z.string().trim().max(1000, 'must be at most 1000 characters'),
  slug_prefix: slugPrefix,
  field_schema: fieldSchema,
  behaviors: behaviorsInput,
  icon: oneLine(100),
  color,
  is_active: z.boolean(),
  sort_order: z.number().int().min(0).max(1_000_000),
};
/** What a client may echo back unchanged from an answer; ignored on writes. */
const readOnly = {
  id: z.unknown(),
  is_built_in: z.unknown(),
  created_at: z.unknown(),
  updated_at: z.unknown(),
};

export const createInput = z
  .strictObject({ type_key: typeKey, ...editable, ...readOnly })
  .partial()
  .required({ type_key: true, type_name: true });
export const updateInput = z
  .strictObject({ type_key: typeKey, ...editable, ...readOnly })
  .partial()
  .refine((b) => Object.keys(b).some((k) => k in editable || k === 'type_key'), 'send at least one field to change');
export type CreateInput = z.output<typeof createInput>;
export type UpdateInput = z.output<typeof updateInput>;

/** A definition's own behaviours with the given ones applied (null drops a further key; a known one takes null as its value). */
export function applyBehaviors(stored: Record<string, unknown>, given: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = { ...stored };
  for (const [k, v] of Object.entries(given)) {
    if (v === null && !KNOWN_BEHAVIORS.has(k)) delete out[k];
    else out[k] = v;
  }
  return out;
}

// Field values of posts

const fieldError = (name: string, message: string) => badRequest(`fields.${name}: ${message}`, [{ field: `fields.${name}`, message }]);

function isCalendarDay(v: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

const isWebUrl = (v: string) => /^https?:\/\/\S+$/i.test(v) && URL.canParse(v);

function depth(v: unknown, d = 0): number {
  if (d > 20 || v === null || typeof v !== 'object') return d;
  return Math.max(d, ...Object.values(v).map((x) => depth(x, d + 1)));
}

/** One value of a field as its type stores it; throws a 400 naming the field and the rule. */
function checkValue(f: FieldDef, v: unknown): unknown {
  const max = f.max_length ?? DEFAULT_MAX[f.type];
  const str = (): string => {
    if (typeof v !== 'string') throw fieldError(f.name, `must be text (${f.type})`);
    if (max && v.length > max) throw fieldError(f.name, `must be at most ${max} characters`);
    return v;
  };
  switch (f.type) {
    case 'text':
      if (/[\u0000-\u001f\u007f]/.test(str())) throw fieldError(f.name, 'must be one line without control characters');
      return v;
    case 'textarea':
      return str();
    case 'number': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
      if (!Number.isFinite(n)) throw fieldError(f.name, 'must be a number');
      return n;
    }
    case 'boolean':
      if (typeof v === 'boolean') return v;
      if (v === 'true' || v === 'false') return v === 'true';
      throw fieldError(f.name, 'must be true or false');
    case 'date':
      if (!isCalendarDay(str())) throw fieldError(f.name, 'must be a date as YYYY-MM-DD');
      return v;
    case 'datetime':
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(str()) || Number.isNaN(Date.parse(v as string))) {
        throw fieldError(f.name, 'must be an ISO 8601 date and time');
      }
      return new Date(v as string).toISOString();
    case 'url':
    case 'image':
      if (!isWebUrl(str())) throw fieldError(f.name, 'must be an http(s) URL');
      return v;
    case 'email': {
      const r = emailAddress.safeParse(str());
      if (!r.success) throw fieldError(f.name, 'must be an email address');
      return r.data;
    }
    case 'color':
      if (!/^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i.test(str())) throw fieldError(f.name, 'must be a hex colour such as #2563eb');
      return (v as string).toLowerCase();
    case 'select':
      if (typeof v !== 'string' || !f.options.includes(v)) throw fieldError(f.name, `must be one of ${f.options.join(', ')}`);
      return v;
    case 'multiselect': {
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || !f.options.includes(x))) {
        throw fieldError(f.name, `must be a list of values among ${f.options.join(', ')}`);
      }
      return [...new Set(v as string[])];
    }
    case 'json': {
      const text = JSON.stringify(v);
      if (text === undefined || text.length > JSON_VALUE_MAX) throw fieldError(f.name, `must be JSON of at most ${JSON_VALUE_MAX} bytes`);
      if (depth(v) > 10) throw fieldError(f.name, 'must nest at most 10 levels');
      return v;
    }
  }
}

/**
 * Checks a post's field values against a type's field schema: unknown names, missing required
 * fields and values of the wrong kind are refused (400 naming `fields.<name>` and the rule).
 * Empty values ('' or null) of optional fields are dropped.
 */
export function checkFieldValues(typeKeyName: string, schema: FieldDef[], values: Record<string, unknown>): Record<string, unknown> {
  const byName = new Map(schema.map((f) => [f.name, f]));
  for (const k of Object.keys(values)) {
    if (!byName.has(k)) throw fieldError(k, `not a field of post type "${typeKeyName}"`);
  }
  const out: Record<string, unknown> = {};
  for (const f of schema) {
    const v = values[f.name];
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0 && f.type === 'multiselect')) {
      if (f.required) throw fieldError(f.name, `required for post type "${typeKeyName}"`);
      continue;
    }
    out[f.name] = checkValue(f, v);
  }
  return out;
}

/** A definition with a field another needs refused outright (a 400 naming it) — used by the stores' writers. */
export const definitionError = (code: string, message: string, field?: string) => new AppError(400, code, message, field ? [{ field, message }] : undefined);
