import { UsageError } from './errors.js';

export interface CliStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

export interface UiOptions {
  json?: boolean;
  yes?: boolean;
  /** false with --no-prompt. */
  prompt?: boolean;
  verbose?: boolean;
}

/** A question a flag can answer; the caller asks only when the flag was not given. */
export interface Question<T> {
  /** The flag that answers it, named when the answer is missing. */
  flag: string;
  message: string;
  /** What is missing, in the error when there is no answer (default: the message). */
  what?: string;
  /** Taken by --yes, by --no-prompt, and when there is no terminal to ask on. */
  default?: T;
  /** Taken by --yes only (a generated password, say); --no-prompt still wants the flag. */
  yesDefault?: () => T;
}

export type TaskProgress = (detail: string) => void;

/** `1 migration`, `3 migrations`. */
export const count = (n: number, noun: string, plural = `${noun}s`): string => `${n} ${n === 1 ? noun : plural}`;

/**
 * Everything the CLI says. stdout carries results (one JSON document with --json, nothing else);
 * prompts, progress and warnings go to stderr so scripts can pipe stdout.
 */
export class Ui {
  readonly json: boolean;
  readonly yes: boolean;
  readonly verbose: boolean;
  /** Questions may be asked: a terminal on stdin and stderr, and neither --yes nor --no-prompt. */
  readonly interactive: boolean;
  private readonly fancy: boolean;

  constructor(
    readonly streams: CliStreams,
    opts: UiOptions = {},
  ) {
    this.json = Boolean(opts.json);
    this.yes = Boolean(opts.yes);
    this.verbose = Boolean(opts.verbose);
    this.interactive = !this.yes && opts.prompt !== false && Boolean(streams.stdin.isTTY && streams.stderr.isTTY);
    this.fancy = Boolean(streams.stderr.isTTY);
  }

  /** A line of human output on stdout (suppressed with --json). */
  print(line = ''): void {
    if (!this.json) this.streams.stdout.write(`${line}\n`);
  }

  /** The machine-readable result (only with --json). */
  result(value: unknown): void {
    if (this.json) this.streams.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  note(line = ''): void {
    this.streams.stderr.write(`${line}\n`);
  }

  warn(line: string): void {
    this.streams.stderr.write(`warning: ${line}\n`);
  }

  /** One finished line of a task list: `  ✔ title (detail)`. */
  step(status: 'ok' | 'warn' | 'fail' | 'skip', title: string, detail?: string): void {
    const mark = { ok: '✔', warn: '!', fail: '✖', skip: '-' }[status];
    this.note(`  ${mark} ${title}${detail ? ` (${detail})` : ''}`);
  }

  /** Runs one titled task of a task list; `done` turns its result into the detail shown. */
  async task<T>(title: string, fn: (progress: TaskProgress) => Promise<T>, done?: (r: T) => string | undefined): Promise<T> {
    const err = this.streams.stderr;
    if (this.fancy) err.write(`  … ${title}`);
    const progress: TaskProgress = (detail) => {
      if (this.fancy) err.write(`\r\x1b[2K  … ${title}: ${detail}`);
      else err.write(`    · ${detail}\n`);
    };
    const clear = () => this.fancy && err.write('\r\x1b[2K');
    try {
      const r = await fn(progress);
      clear();
      this.step('ok', title, done?.(r));
      return r;
    } catch (e) {
      clear();
      this.step('fail', title);
      throw e;
    }
  }

  private async answer<T>(q: Question<T>, ask: () => Promise<T>): Promise<T> {
    if (this.interactive) return ask();
    if (this.yes && q.yesDefault) return q.yesDefault();
    if (q.default !== undefined) return q.default;
    const alt = q.yesDefault && !this.yes && q.flag !== '--yes' ? ' (or --yes)' : '';
    throw new UsageError(`missing ${q.flag}: ${q.what ?? q.message}`, `pass ${q.flag}${alt}, or run in a terminal to be asked`);
  }

  private ctx() {
    return { input: this.streams.stdin, output: this.streams.stderr };
  }

  input(q: Question<string> & { validate?: (v: string) => true | string }): Promise<string> {
    return this.answer(q, async () => {
      const { input } = await import('@inquirer/prompts');
      return input({ message: q.message, default: q.default, validate: q.validate }, this.ctx());
    });
  }

  password(q: Question<string> & { validate?: (v: string) => true | string }): Promise<string> {
    return this.answer(q, async () => {
      const { password } = await import('@inquirer/prompts');
      return password({ message: q.message, mask: true, validate: q.validate }, this.ctx());
    });
  }

  select<T extends string>(q: Question<T> & { choices: { value: T; name: string }[] }): Promise<T> {
    return this.answer(q, async () => {
      const { select } = await import('@inquirer/prompts');
      return select<T>({ message: q.message, default: q.default, choices: q.choices }, this.ctx());
    });
  }

  confirm(q: Question<boolean>): Promise<boolean> {
    return this.answer(q, async () => {
      const { confirm } = await import('@inquirer/prompts');
      return confirm({ message: q.message, default: q.default }, this.ctx());
    });
  }
}
