import cluster from 'node:cluster';
import http from 'node:http';
import express from 'express';

/**
 * The baselines: a bare Express app with one JSON route, or (HELLO_KIND=bare) the same JSON hello from
 * a plain `node:http` listener, what any Node server costs at least. Started like the real server (a
 * child process; HELLO_WORKERS > 1 shares the port through node:cluster as `serve --workers` does).
 */
const bare = process.env.HELLO_KIND === 'bare';
const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';
const workers = Math.max(1, Number(process.env.HELLO_WORKERS ?? 1));

if (workers > 1 && cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork();
  const stop = () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  cluster.on('exit', () => {
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  });
} else if (bare) {
  const hello = JSON.stringify({ success: true, message: 'hello' });
  const health = JSON.stringify({ success: true, status: 'ok' });
  const server = http.createServer((req, res) => {
    const body = req.url === '/health' ? health : hello;
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.listen(port, host);
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} else {
  const app = express();
  app.disable('x-powered-by');
  app.get('/health', (_req, res) => {
    res.json({ success: true, status: 'ok' });
  });
  app.get('/hello', (_req, res) => {
    res.json({ success: true, message: 'hello' });
  });
  const server = app.listen(port, host);
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
