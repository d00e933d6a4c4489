import { InvalidArgumentError } from 'commander';

/** `--port`: a usage error (exit 2) right at parsing, instead of a configuration error later. */
export function portArg(v: string): string {
  if (!/^\d+$/.test(v) || Number(v) > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return v;
}
