// The outbound proxy settings as the environment gives them: HTTPS_PROXY, HTTP_PROXY and NO_PROXY in either
// case (lower case first where both are set, as curl and undici read them), and PROXY_ALSO_FOR. A proxy URL
// may carry credentials (http://user:password@proxy:3128); they stay in `url`, which only the agents read:
// everything that is shown (logs, errors, status, health) uses `address`, host and port alone.
import { hostEntries, hostRules } from './host-rules.js';

export interface ProxyEndpoint {
  /** The whole URL, credentials included: handed to the agents that connect, and to nothing else. */
  url: string;
  /** `host:port`: how the proxy is named wherever it is shown. */
  address: string;
  /** The variable it was read from, as set (`HTTPS_PROXY` or `https_proxy`...), for messages that say what to change. */
  variable: string;
  /** The URL holds a user name or password (a 407 then means they were refused, not missing). */
  credentials: boolean;
}

export interface ProxySettings {
  /** For https: and wss: targets: HTTPS_PROXY, else HTTP_PROXY (as undici's EnvHttpProxyAgent and npm do). */
  https: ProxyEndpoint | undefined;
  /** For http: and ws: targets: HTTP_PROXY. */
  http: ProxyEndpoint | undefined;
  /** NO_PROXY's entries (host-rules.ts): reached directly. */
  noProxy: string[];
  /** PROXY_ALSO_FOR's entries: loopback hosts and the IBKR gateway's host that go through the proxy all the same. */
  alsoFor: string[];
}

type Env = Record<string, string | undefined>;

/** The settings, and one line per problem (never a credential) for the configuration's report. */
export function proxySettings(env: Env, problems: string[]): ProxySettings {
  const http = endpoint(env, 'HTTP_PROXY', problems);
  const https = endpoint(env, 'HTTPS_PROXY', problems) ?? http;
  const list = (name: string): string[] => {
    const { value, variable } = read(env, name);
    const entries = hostEntries(value);
    try {
      hostRules(entries);
    } catch (error) {
      problems.push(`${variable}: ${(error as Error).message}`);
    }
    return entries;
  };
  return { https, http, noProxy: list('NO_PROXY'), alsoFor: list('PROXY_ALSO_FOR') };
}

/** The lower-case variable where it is set, else the upper-case one (an empty lower-case one still wins, as in undici). */
function read(env: Env, name: string): { value: string | undefined; variable: string } {
  const lower = name.toLowerCase();
  if (env[lower] !== undefined) return { value: env[lower]?.trim(), variable: lower };
  return { value: env[name]?.trim(), variable: name };
}

function endpoint(env: Env, name: string, problems: string[]): ProxyEndpoint | undefined {
  const { value, variable } = read(env, name);
  if (value === undefined || value === '') return undefined;
  // `proxy:3128` without a scheme is common in the wild and read as http:// by curl and npm.
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    problems.push(`${variable} must be a proxy URL such as http://proxy.example.com:3128`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`${variable} must be an http:// or https:// proxy (got ${url.protocol}//${url.host}); SOCKS proxies are not supported`);
    return undefined;
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '') {
    problems.push(
      `${variable} must name the proxy only, scheme://host:port, without a path (got ${url.protocol}//${url.host}${url.pathname})`,
    );
    return undefined;
  }
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { url: url.href, address: `${url.hostname}:${port}`, variable, credentials: url.username !== '' || url.password !== '' };
}

/** The credentials of a proxy URL as they may appear in text: raw, decoded, and as the Basic header sends them. */
export function proxySecrets(proxy: ProxyEndpoint | undefined): string[] {
  if (proxy === undefined || !proxy.credentials) return [];
  const url = new URL(proxy.url);
  const decoded = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return [url.password, decodeURIComponent(url.password), Buffer.from(decoded).toString('base64')].filter((s) => s.length >= 4);
}
