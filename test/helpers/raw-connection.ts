import net from 'node:net';

export interface RawOutcome {
  answer: string;
  /** The socket error's code (a reset is ECONNRESET), or null when it closed cleanly. */
  error: string | null;
}

/** A raw HTTP/1.1 connection: write requests on it (pipelined or not) and collect what comes back until it closes. */
export function rawConnection(port: number): { socket: net.Socket; connected: Promise<void>; received: () => string; done: Promise<RawOutcome> } {
  const socket = net.connect(port, '127.0.0.1');
  let answer = '';
  let error: string | null = null;
  socket.on('data', (d) => (answer += d));
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
  return {
    socket,
    connected: new Promise((r) => socket.once('connect', () => r())),
    received: () => answer,
    done: new Promise((r) => socket.once('close', () => r({ answer, error }))),
  };
}
