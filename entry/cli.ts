// The composition root (with entry/sea.ts): the only code that imports both core and modules/. It
// picks what ships — the module registry — and hands it to core, whose builder (src/app-context.ts)
// assembles the rest. bin/gatehouse imports the compiled file; the single executable starts from
// entry/sea.ts.
import { main } from '../src/cli/main.js';
import { registry } from '../modules/index.js';

await main(registry);
