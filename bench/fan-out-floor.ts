// The floor under a stream fan-out on this machine: a bare node:net server writing one frame of a broker
// event's size to every one of N loopback sockets, as fast as a loop of socket.write goes, read by client
// processes that count the bytes and nothing else. What a pass over 10,000 viewers costs here before the
// service does any work of its own: on loopback each write also does the receiving side's kernel work
// (the reader's TCP receive and its wake-up run in the writer's system call), so most of it is the kernel's.
// The broker stream bench's "CPU a write" column and its pass times are read against it.
// Per level: the median over BENCH_FLOOR_PASSES (default 20) passes of the pass's wall time and the server's
// user and system CPU per write. BENCH_PIN=on puts the server on CPU 1 and the readers on CPU 0.
//   npx tsx bench/fan-out-floor.ts   (in npm run bench)
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Socket, connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { pinning } from './cpu-pinning.js';
import { median } from './autocannon-run.js';

const LEVELS = (process.env.BENCH_FLOOR_LEVELS ?? '1000,10000').split(',').map(Number);
const PASSES = Number(process.env.BENCH_FLOOR_PASSES ?? 20);
/** A 10-symbol brokerQuotes event as the service frames it (bench/broker-stream.ts's topic), in bytes. */
const FRAME_BYTES = Number(process.env.BENCH_FLOOR_FRAME_BYTES ?? 2_000);
const READERS = 4;
/** BENCH_PIN=on: the server (this process) on CPU 1, as the service is in the broker stream bench; the readers on CPU 0. */
const PINNING = pinning(false);
/** Between passes, long enough for the readers to drain: a pass measures writes, not a full socket. */
const PAUSE_MS = 150;

/** A reader process: opens its sockets in batches (a connect storm overflows the accept queue) and reads. */
async function reader(port: number, count: number): Promise<void> {
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, count - i) }, async () => {
        const socket = connect({ port, host: '127.0.0.1' });
        socket.on('data', () => {});
        await once(socket, 'connect');
        sockets.push(socket);
      }),
    );
  }
  process.send!('open');
  process.once('message', () => {
    for (const socket of sockets) socket.destroy();
    process.disconnect();
  });
}

interface Pass {
  wallMs: number;
  userMicros: number;
  systemMicros: number;
}

async function level(viewers: number): Promise<Pass[]> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 });
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const readers: ChildProcess[] = Array.from({ length: READERS }, (_, i) => {
    const count = Math.floor(viewers / READERS) + (i < viewers % READERS ? 1 : 0);
    const [execPath, execArgv] = PINNING.onLoadCpu(process.execPath, ['--import', 'tsx']);
    return fork(fileURLToPath(import.meta.url), ['--reader', String(port), String(count)], { execPath, execArgv });
  });
  await Promise.all(readers.map((r) => once(r, 'message')));
  while (sockets.length < viewers) await sleep(20);
  const frame = Buffer.alloc(FRAME_BYTES, 'x');
  const passes: Pass[] = [];
  try {
    for (let i = 0; i < PASSES + 2; i += 1) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (const socket of sockets) socket.write(frame);
      const wallMs = performance.now() - started;
      const used = process.cpuUsage(cpu);
      // The first two warm the JIT.
      if (i >= 2) passes.push({ wallMs, userMicros: used.user / viewers, systemMicros: used.system / viewers });
      await sleep(PAUSE_MS);
    }
  } finally {
    for (const r of readers) r.send('stop');
    await Promise.all(readers.map((r) => (r.exitCode === null ? once(r, 'exit') : undefined)));
    for (const socket of sockets) socket.destroy();
    server.close();
  }
  return passes;
}

export default async function fanOutFloorBench(): Promise<void> {
  PINNING.pinToServerCpu(process.pid);
  console.log(
    `\nfan-out floor: one ${FRAME_BYTES}-byte frame to every loopback socket, a loop of socket.write; ${READERS} reader processes; ${PINNING.description}; median of ${PASSES} passes (node ${process.version})`,
  );
  console.log(' viewers | pass ms | µs a write (user + system)');
  for (const viewers of LEVELS) {
    const passes = await level(viewers);
    const user = median(passes.map((p) => p.userMicros));
    const system = median(passes.map((p) => p.systemMicros));
    console.log(
      `${String(viewers).padStart(8)} | ${median(passes.map((p) => p.wallMs))
        .toFixed(1)
        .padStart(7)} | ${(user + system).toFixed(1)} (${user.toFixed(1)} + ${system.toFixed(1)})`,
    );
  }
}

if (process.argv[2] === '--reader') await reader(Number(process.argv[3]), Number(process.argv[4]));
else if (import.meta.url === `file://${process.argv[1]}`) await fanOutFloorBench();
