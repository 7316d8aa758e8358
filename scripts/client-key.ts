// `npm run client-key -- <name> [share=2] [scopes=market,mcp] [rate=120]`: makes a new client key and prints it
// with its CLIENT_KEYS line. The key is shown once, here; the configuration holds only its SHA-256.
import { createHash, randomBytes } from 'node:crypto';
import { parseClientKeys } from '../src/core/client-keys.js';

const [name, ...fields] = process.argv.slice(2);
if (name === undefined) {
  console.error('usage: npm run client-key -- <name> [share=<weight>] [scopes=market,broker,mcp] [rate=<per minute>]');
  process.exit(2);
}
const key = `mdp_${randomBytes(32).toString('base64url')}`;
const line = [name, `sha256=${createHash('sha256').update(key).digest('hex')}`, ...fields].join(' ');
try {
  // The same check the service makes at start.
  parseClientKeys(line);
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
console.log(`key (give it to the client; it is not stored anywhere):\n  ${key}\n`);
console.log(`CLIENT_KEYS line (or a line of CLIENT_KEYS_FILE):\n  ${line}`);
