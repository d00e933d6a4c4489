import type { Duplex } from 'node:stream';

const ANSWERS: Record<string, [number, string, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request headers too large', 'HEADERS_TOO_LARGE'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'Request timed out', 'REQUEST_TIMEOUT'],
};

/**
 * Node's `clientError`: a request the HTTP parser refused (headers over maxHeaderSize, garbage,
 * timeouts) never reaches Express. Node would answer an empty 400/431; this answers the same
 * status with the JSON error shape and closes the connection.
 */
export function answerClientError(err: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, error, code] = ANSWERS[err.code ?? ''] ?? [400, 'Bad Request', 'Malformed request', 'BAD_REQUEST'];
  const body = JSON.stringify({ success: false, error, code });
  // A HEAD request gets the head only (RFC 9110 §9.3.2), as Node does for answers it writes itself.
  const head = err.rawPacket?.subarray(0, 5).toString('latin1').toUpperCase() === 'HEAD ';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
  );
}
