import cluster from 'node:cluster';
import express from 'express';

/**
 * The baseline: a bare Express app with one JSON route, started like the real server (a child
 * process; HELLO_WORKERS > 1 shares the port through node:cluster as `serve --workers` does).
 */
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
