// The simulated gateway serves HTTPS with a self-signed certificate, like the real one, so that the
// adapter's "verification off for this host only" path is the one exercised. Generated once per process.
import selfsigned from 'selfsigned';

export interface TlsMaterial {
  key: string;
  cert: string;
}

let material: Promise<TlsMaterial> | undefined;

export function selfSignedCertificate(): Promise<TlsMaterial> {
  material ??= selfsigned
    .generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      algorithm: 'sha256',
      extensions: [
        { name: 'basicConstraints', cA: false },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
          ],
        },
      ],
    })
    .then((pems) => ({ key: pems.private, cert: pems.cert }));
  return material;
}
