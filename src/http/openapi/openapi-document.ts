import { z } from 'zod';
import type { Config } from '../../config/schema.js';
import type { AuthMode, RouteShape } from '../define-route.js';
import { rateLimitLabel } from '../middleware/rate-limit.js';

/** One route as the API serves it: its definition and, for a module's route, the module. */
export interface DocumentedRoute {
  def: RouteShape;
  module?: { id: string; version?: string; description?: string; errorCodes?: { code: string; status: number; description: string }[] };
}

type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema of what a route accepts, from the same zod schema defineRoute enforces
 * (zod 4's own converter; `input`: what a client sends, before transforms and defaults).
 */
export function inputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** `/auth/users/:id` → `/auth/users/{id}`; the names of the path parameters. */
export function openApiPath(expressPath: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path, params };
}

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const errorAnswer = (description: string) => ({ description, content: { 'application/json': { schema: ERROR_REF } } });

function modeOf(def: RouteShape, config: Config): AuthMode {
  return typeof def.auth === 'function' ? def.auth(config) : def.auth;
}

const SESSION: Record<string, string[]>[] = [{ sessionHeader: [] }, { sessionCookie: [] }, { sessionQuery: [] }];

function security(mode: AuthMode): Record<string, string[]>[] {
  if (mode === 'public') return [];
  if (mode === 'bridge') return [{ bridgeSecret: [] }];
  if (mode === 'bridge+session')
    return [
      { bridgeSecret: [], sessionHeader: [] },
      { bridgeSecret: [], sessionCookie: [] },
    ];
  // Anonymous calls are answered too.
  if (mode === 'optional-session') return [...SESSION, {}];
  return SESSION;
}

function describeAuth(mode: AuthMode): string {
  if (mode === 'public') return 'public';
  if (typeof mode === 'object') return `session of a user of type ${mode.roles.join(', ')}`;
  return mode;
}

/** Query or path parameters from an object schema (one parameter per property). */
function parameters(where: 'query' | 'path', schema: z.ZodType | undefined, names: string[] = []): JsonSchema[] {
  const out: JsonSchema[] = [];
  const json = schema ? inputSchema(schema) : null;
  const props = (json?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json?.required ?? []) as string[]);
  const all = new Set([...names, ...Object.keys(props)]);
  for (const name of all) {
    out.push({
      name,
      in: where,
      required: where === 'path' || required.has(name),
      schema: props[name] ?? { type: 'string' },
    });
  }
  return out;
}

function operation(route: DocumentedRoute, config: Config, pathParams: string[]): JsonSchema {
  const { def, module } = route;
  const mode = modeOf(def, config);
  const responses: Record<string, unknown> = {
    200: { description: 'Success', content: { 'application/json': { schema: { $ref: '#/components/schemas/Success' } } } },
  };
  if (def.body || def.query || def.params || def.method !== 'get')
    responses[400] = errorAnswer('Invalid input (VALIDATION_ERROR, with details naming the fields)');
  if (mode !== 'public') responses[401] = errorAnswer(mode === 'bridge' ? 'Missing or wrong X-Bridge-Secret' : 'No valid session');
  if (typeof mode === 'object') responses[403] = errorAnswer('The session user may not do this');
  if (def.rateLimit !== false) responses[429] = errorAnswer('Rate limited (see Retry-After)');
  responses[500] = errorAnswer('Internal error');
  if (module || mode === 'bridge' || mode === 'bridge+session') responses[503] = errorAnswer(module ? 'Module switched off (MODULE_DISABLED)' : 'Unavailable');

  const op: JsonSchema = {
    operationId: `${def.method}${openApiPath(def.path)
      .path.replace(/[{}]/g, '')
      .replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    tags: [module?.id ?? 'core'],
    // A route without one (a module of another origin) still gets a line, if only its method and path.
    summary: def.summary ?? `${def.method.toUpperCase()} ${def.path}`,
    description: `Auth: ${describeAuth(mode)}. Rate-limit class: ${rateLimitLabel(def.rateLimit) ?? 'none'}.`,
    security: security(mode),
    'x-gatehouse-auth': typeof mode === 'object' ? { roles: mode.roles } : mode,
    'x-gatehouse-rate-limit': rateLimitLabel(def.rateLimit),
    ...(module ? { 'x-gatehouse-module': module.id } : {}),
    responses,
  };
  const params = [...parameters('path', def.params, pathParams), ...parameters('query', def.query)];
  if (params.length) op.parameters = params;
  if (def.body) {
    op.requestBody = { required: true, content: { 'application/json': { schema: inputSchema(def.body) } } };
  } else if (def.middleware?.length && def.method !== 'get') {
    // Routes that parse their own body (multipart picture upload).
    op.requestBody = { content: { 'multipart/form-data': { schema: { type: 'object' } } } };
  }
  return op;
}

/** The OpenAPI 3.1 document of the given routes, as served at GET /openapi.json. */
export function buildOpenApiDocument(routes: DocumentedRoute[], config: Config, version: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Map<string, Record<string, unknown>>([['core', { description: 'Gatehouse core API' }]]);
  for (const route of routes) {
    const { path, params } = openApiPath(route.def.path);
    const item = (paths[path] ??= {});
    // The first definition of a method and path wins, as in the router.
    if (item[route.def.method]) continue;
    item[route.def.method] = operation(route, config, params);
    if (route.module && !tags.has(route.module.id)) {
      const { id, description, errorCodes } = route.module;
      // The codes the module's manifest declares, for clients matching on `code`.
      tags.set(id, { description: description ?? `Module ${id}`, ...(errorCodes?.length ? { 'x-error-codes': errorCodes } : {}) });
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatehouse API',
      version,
      description: 'Generated from the route table of this server: core routes and those of the modules installed now.',
    },
    servers: [{ url: config.publicBaseUrl }],
    tags: [...tags].map(([name, tag]) => ({ name, ...tag })),
    paths,
    components: {
      securitySchemes: {
        sessionHeader: { type: 'apiKey', in: 'header', name: 'X-Session-ID' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'session_id' },
        sessionQuery: { type: 'apiKey', in: 'query', name: 'session_id' },
        bridgeSecret: { type: 'apiKey', in: 'header', name: 'X-Bridge-Secret', description: 'BRIDGE_VALIDATION_SECRET, for backends only' },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['success', 'error', 'code'],
          properties: {
            success: { const: false },
            error: { type: 'string' },
            code: { type: 'string' },
            details: {
              type: 'array',
              description: 'Which input the error is about: every bad field of a validation failure, the one field of other refusals',
              items: {
                type: 'object',
                required: ['field', 'message'],
                properties: { field: { type: ['string', 'null'] }, message: { type: 'string' }, code: { type: 'string' } },
              },
            },
          },
        },
        Success: { type: 'object', properties: { success: { type: 'boolean' } }, additionalProperties: true },
      },
    },
  };
}
