import { spawn } from 'node:child_process';

export interface TimedRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
}

const CLIENT = `
let input = '';
for await (const chunk of process.stdin) input += chunk;
const { requests, pauseMs } = JSON.parse(input);
const out = [];
for (const r of requests) {
  await new Promise((res) => setTimeout(res, pauseMs));
  const t0 = process.hrtime.bigint();
  const res = await fetch(r.url, { method: r.method, headers: r.headers, body: r.body });
  await res.arrayBuffer();
  out.push({ ms: Number(process.hrtime.bigint() - t0) / 1e6, status: res.status });
}
process.stdout.write(JSON.stringify(out));
`;

/**
 * Sends requests one at a time from a process of its own and times each answer, as a remote caller
 * would see it: a client in the server's own process would also wait for work the server does after
 * answering. `pauseMs` between requests lets that work finish.
 */
export async function timeRequests(requests: TimedRequest[], pauseMs = 25): Promise<{ ms: number; status: number }[]> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CLIENT], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stdin.end(JSON.stringify({ requests, pauseMs }));
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  if (code !== 0) throw new Error(`timing client exited with ${code}`);
  return JSON.parse(out);
}
