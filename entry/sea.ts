// The single executable's entry: set-up first (import order is evaluation order), then the CLI with
// the shipped module registry (the composition root, as entry/cli.ts).
import '../src/sea/setup.js';
import { main } from '../src/cli/main.js';
import { registry } from '../modules/index.js';

void main(registry);
