// Raw HTTP/1.1 over node:net, for what a well-behaved client library would not send (no Host, an absolute-form
// request line, a body on GET, a request that never ends): the server reads exactly the bytes written here.
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import type { RunningApp } from './app.js';

export interface RawAnswer {
  status: number;
  headers: string;
  body: any;
}

export function parseRaw(text: string): RawAnswer {
  const [head = '', ...rest] = text.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  let body: unknown;
  try {
    body = JSON.parse(rest.join('\r\n\r\n'));
  } catch {
    body = undefined;
  }
  return { status, headers: head.toLowerCase(), body };
}

export async function open(running: RunningApp): Promise<Socket> {
  const socket = connect(Number(new URL(running.url).port), '127.0.0.1');
  await once(socket, 'connect');
  return socket;
}

/**
 * Resolves when the socket is closed, reset or not. (`once(socket, 'close')` rejects on the 'error' a reset
 * emits first: a server that closes on a client still writing resets the connection.)
 */
export function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

/** Sends `data`, then reads until the server closes the connection. */
export async function exchangeUntilClose(running: RunningApp, data: string): Promise<RawAnswer> {
  const socket = await open(running);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => {});
  socket.write(data);
  await closed(socket);
  const answer = parseRaw(Buffer.concat(chunks).toString('utf8'));
  running.scan.responses.push(Buffer.concat(chunks).toString('utf8'));
  return answer;
}
