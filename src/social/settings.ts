import { z } from 'zod';

/** The six provider ids of the contract (§2.9), in the order they are listed. */
export const PROVIDER_IDS = ['google', 'github', 'facebook', 'apple', 'discord', 'microsoft'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

export const isProviderId = (v: unknown): v is ProviderId => typeof v === 'string' && (PROVIDER_IDS as readonly string[]).includes(v);

/** Every URL a provider uses, each overridable (a self-hosted proxy, or a test standing in for the provider). */
export const ENDPOINT_KEYS = ['authorization', 'token', 'userinfo', 'emails', 'jwks', 'issuer', 'token_check'] as const;
export type EndpointKey = (typeof ENDPOINT_KEYS)[number];
export type Endpoints = Partial<Record<EndpointKey, string>>;

const httpUrl = z
  .string()
  .url()
  .refine((v) => /^https?:\/\//i.test(v), 'expected an http(s) URL');

const endpointsSchema = z
  .object(Object.fromEntries(ENDPOINT_KEYS.map((k) => [k, httpUrl.optional()])) as Record<EndpointKey, z.ZodOptional<typeof httpUrl>>)
  .strict();

const providerSchema = z
  .object({
    client_id: z.string().min(1).optional(),
    /** Mobile apps (iOS, Android) have client ids of their own: id_tokens for any of them are accepted. */
    client_ids: z.array(z.string().min(1)).min(1).optional(),
    client_secret: z.string().min(1).optional(),
    scopes: z.array(z.string().min(1)).optional(),
    /** Keep the provider's access and refresh tokens (encrypted) on the linked account. */
    store_tokens: z.boolean().optional(),
    /** Microsoft: the directory (tenant) id, `common`, `organizations` or `consumers`. */
    tenant: z
      .string()
      .regex(/^[A-Za-z0-9.-]{1,100}$/)
      .optional(),
    /** Apple: the ES256 client secret is signed with this key. */
    team_id: z.string().min(1).optional(),
    key_id: z.string().min(1).optional(),
    private_key_file: z.string().min(1).optional(),
    private_key: z.string().min(1).optional(),
    endpoints: endpointsSchema.optional(),
  })
  .strict()
  .refine((p) => p.client_id || p.client_ids, 'client_id or client_ids is required');

export type ProviderSettings = z.infer<typeof providerSchema>;
export type SocialAuthSettings = Partial<Record<ProviderId, ProviderSettings>>;

const settingsObject = z
  .object(Object.fromEntries(PROVIDER_IDS.map((id) => [id, providerSchema.optional()])) as Record<ProviderId, z.ZodOptional<typeof providerSchema>>)
  .strict();

/** SOCIAL_AUTH: a JSON object keyed by provider id (validated strictly, so a typo fails at start). */
export const socialAuthSchema = z.union([z.string(), z.record(z.string(), z.unknown())]).transform((raw, ctx): SocialAuthSettings => {
  let value: unknown = raw;
  if (typeof raw === 'string') {
    if (!raw.trim()) return {};
    try {
      value = JSON.parse(raw);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'expected a JSON object keyed by provider (google, github, facebook, apple, discord, microsoft)' });
      return z.NEVER;
    }
  }
  const parsed = settingsObject.safeParse(value);
  if (!parsed.success) {
    for (const i of parsed.error.issues) ctx.addIssue({ code: 'custom', message: `${i.path.join('.') || 'SOCIAL_AUTH'}: ${i.message}` });
    return z.NEVER;
  }
  return parsed.data;
});

/** The web client id (the first of client_ids when client_id is absent). */
export function webClientId(s: ProviderSettings): string {
  const id = s.client_id ?? s.client_ids?.[0];
  // The settings schema refuses a provider with neither.
  if (!id) throw new Error('social: a provider without client_id or client_ids');
  return id;
}

/** Every audience an id_token may be minted for: the web client and the mobile apps. */
export const audiences = (s: ProviderSettings): string[] => [...new Set([...(s.client_id ? [s.client_id] : []), ...(s.client_ids ?? [])])];
