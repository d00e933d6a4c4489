import { main } from './main.js';

// The CLI entry (bin/gatehouse imports this file); the single executable starts from src/sea/entry.ts.
await main();
