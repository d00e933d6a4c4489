/**
 * Whether a parsed JSON value nests deeper than `limit` (a scalar is depth 0, `{}` or `[]` depth 0,
 * `{"a":{}}` depth 1). Iterative, so no input can overflow the stack here; JSON.stringify and most
 * validators recurse, and a few thousand nested brackets, about 10 KB of body, overflow them.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [v, depth] = top;
    if (!v || typeof v !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * The path ("a.b.0") of the first string, key or value, that holds a NUL character; null when none.
 * NUL has no place in any field, and SQLite's driver cuts the statement at it (a 500, not a 400).
 */
export function nulPath(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, '']];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [v, path] = top;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return path;
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    for (const [k, child] of Object.entries(v)) {
      const at = path ? `${path}.${k}` : k;
      if (k.includes('\u0000')) return at;
      stack.push([child, at]);
    }
  }
  return null;
}
