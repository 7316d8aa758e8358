// bench/bare-in-service.ts's server: the service as `npm start` runs it, and bench/bare-server.ts beside it in the
// same process (it prints its own port and answers on it).
import { join } from 'node:path';
import { serviceEntry } from './processes.js';

await import(join(process.cwd(), serviceEntry()));
await import('./bare-server.js');
