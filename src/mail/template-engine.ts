/**
 * A deliberately tiny mustache subset, so mail needs no template dependency:
 *   {{name}}                 value; HTML-escaped when rendering HTML
 *   {{{name}}}               raw value; only for names the caller allows (the layout's body slot)
 *   {{#name}}…{{/name}}      block kept when the value is non-empty
 *   {{^name}}…{{/name}}      block kept when the value is empty
 * Values are substituted in one pass, so text coming from data is never parsed as a template.
 */

export type TemplateVars = Record<string, string>;

export interface RenderOptions {
  /** Escape values for HTML. Plain text and subjects are rendered unescaped. */
  html: boolean;
  /** Names that may be interpolated raw with {{{name}}}; anything else is a template error. */
  raw?: readonly string[];
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => HTML_ESCAPES[c]);
}

const SECTION_RE = /\{\{([#^])\s*([\w-]+)\s*\}\}([\s\S]*?)\{\{\/\s*\2\s*\}\}/g;
const TAG_RE = /\{\{\{\s*([\w-]+)\s*\}\}\}|\{\{\s*([\w-]+)\s*\}\}/g;

function renderSections(source: string, vars: TemplateVars): string {
  return source.replace(SECTION_RE, (_m, kind: string, name: string, inner: string) => {
    const present = (vars[name] ?? '') !== '';
    return present === (kind === '#') ? renderSections(inner, vars) : '';
  });
}

export function renderTemplate(source: string, vars: TemplateVars, opts: RenderOptions): string {
  const withSections = renderSections(source, vars);
  return withSections.replace(TAG_RE, (_m, rawName: string | undefined, name: string | undefined) => {
    if (rawName !== undefined) {
      // Raw output is an injection hole unless the value is known to be rendered markup.
      if (!opts.raw?.includes(rawName)) throw new Error(`Raw interpolation {{{${rawName}}}} is not allowed here`);
      return vars[rawName] ?? '';
    }
    const value = vars[name as string] ?? '';
    return opts.html ? escapeHtml(value) : value;
  });
}
