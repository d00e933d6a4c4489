// A composition root: the CLI with the shipped module registry. bin/gatehouse imports the compiled
// file; the single executable starts from entry/sea.ts. Core (src/) never imports modules/: the
// registry is handed to it here.
import { main } from '../src/cli/main.js';
import { registry } from '../modules/index.js';

await main(registry);
