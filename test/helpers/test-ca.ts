// A private CA and one certificate it signs, made with openssl in a test's own folder (EC P-256 keys, valid for a
// day): what a TLS-inspecting proxy re-signs with, or what a managed Redis presents.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface IssuedCertificate {
  /** The CA certificate's file: what NODE_EXTRA_CA_CERTS or a client's `ca` names. */
  caFile: string;
  keyFile: string;
  certFile: string;
}

/** `altNames` as openssl writes them (`DNS:localhost`, `IP:127.0.0.1`); the first one's value is the subject's CN. */
export async function issueCertificate(dir: string, caName: string, altNames: readonly string[]): Promise<IssuedCertificate> {
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => promisify(execFile)('openssl', args);
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const commonName = String(altNames[0]).replace(/^\w+:/, '');
  await openssl('req', '-x509', ...ecKey, '-keyout', file('ca.key'), '-out', file('ca.crt'), '-subj', `/CN=${caName}`, '-days', '1');
  await openssl('req', ...ecKey, '-keyout', file('leaf.key'), '-out', file('leaf.csr'), '-subj', `/CN=${commonName}`);
  writeFileSync(file('san.ext'), `subjectAltName=${altNames.join(',')}\n`);
  await openssl(
    'x509',
    '-req',
    '-in',
    file('leaf.csr'),
    '-CA',
    file('ca.crt'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('leaf.crt'),
    '-days',
    '1',
    '-extfile',
    file('san.ext'),
  );
  return { caFile: file('ca.crt'), keyFile: file('leaf.key'), certFile: file('leaf.crt') };
}
