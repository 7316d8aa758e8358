// A deployment with a private side to keep from callers the broker rules do not admit: an outbound proxy with
// credentials, a NO_PROXY list naming internal hosts and ranges, and a broker with its real-time feed. The
// providers are the sandbox's on loopback, reached directly, so nothing is ever sent to the named proxy.

export const PRIVATE_SIDE_ENV: Readonly<Record<string, string>> = {
  HTTPS_PROXY: 'http://user:pw@proxy.corp.internal:3128',
  NO_PROXY: 'vault.corp.internal,10.20.0.0/16',
  BROKER: 'ibkr',
};

const MARKS: Readonly<Record<string, RegExp>> = {
  'proxy host': /proxy\.corp\.internal/,
  'proxy port': /(?<!\d)3128(?!\d)/,
  'NO_PROXY host': /vault\.corp\.internal/,
  'NO_PROXY range': /10\.20\.0\.0\/16/,
  'broker kind': /ibkr/i,
  'broker stream': /"brokerStream"/,
  subscriptions: /"subscriptions"/,
  'tick age': /"lastTickAgeMs"/,
};

/** Every mark of the private side; a local caller's status shows them all. */
export const ALL_OF_THE_PRIVATE_SIDE = Object.keys(MARKS);

/** The marks of the private side a text shows. */
export function privateSideIn(text: string): string[] {
  return Object.entries(MARKS)
    .filter(([, mark]) => mark.test(text))
    .map(([name]) => name);
}
