export const MIN_SECRET_LENGTH = 32;

// Placeholders people paste from examples; a secret containing one was not generated.
const PLACEHOLDERS = ['changeme', 'change-me', 'change_me', 'replace-me', 'replaceme', 'your-secret', 'yoursecret', 'example', 'secret123', 'password'];

/**
 * Why a secret is weak, or null. The one rule for BRIDGE_VALIDATION_SECRET: the config schema refuses
 * a weak one (so `serve` does not start with it) and doctor reports it with the same words.
 */
export function weakness(value: string): string | null {
  if (value.length < MIN_SECRET_LENGTH) return `shorter than ${MIN_SECRET_LENGTH} characters`;
  const lower = value.toLowerCase();
  const placeholder = PLACEHOLDERS.find((p) => lower.includes(p));
  if (placeholder) return `contains the placeholder "${placeholder}"`;
  if (new Set(value).size < 10) return 'too few distinct characters';
  return null;
}
