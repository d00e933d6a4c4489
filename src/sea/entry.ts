// The single executable's entry: set-up first (import order is evaluation order), then the CLI.
import './setup.js';
import { main } from '../cli/main.js';

void main();
