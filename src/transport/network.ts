/**
 * What `ugs doctor` does on the network, behind one interface so the checks can be tested with
 * fakes: a DNS lookup, a TCP connect, a TLS handshake that is inspected rather than trusted
 * blindly. (The one authenticated request of `--probe` is an operation, sent by the service
 * client as `get` is: see service/probe.ts.)
 */

export interface TlsInfo {
  protocol: string | null;
  /** The issuer's CN and O, as the certificate names them. */
  issuer: string;
  validTo: Date;
  /** Whether the chain verified against the CAs ugs would use. */
  authorized: boolean;
  /** Node's code when it did not (`DEPTH_ZERO_SELF_SIGNED_CERT`, ...). */
  authorizationError: string | undefined;
}

export interface TlsTarget {
  host: string;
  port: number;
  servername: string;
  /** The CA list ugs would use; undefined for Node's default store (with NODE_EXTRA_CA_CERTS). */
  ca: string[] | undefined;
  timeoutMs: number;
}

export interface DoctorNetwork {
  /** Addresses of `host`; throws an error with `code` (ENOTFOUND, EAI_AGAIN) when it fails. */
  lookup(host: string): Promise<string[]>;
  /** Resolves once connected (then closes); throws an error with `code`. */
  connect(host: string, port: number, timeoutMs: number): Promise<void>;
  tls(target: TlsTarget): Promise<TlsInfo>;
  /** Milliseconds, for timings. */
  now(): number;
}

export class TimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

export function realNetwork(): DoctorNetwork {
  return {
    async lookup(host) {
      const { lookup } = await import('node:dns/promises');
      const found = await lookup(host, { all: true });
      return found.map((entry) => entry.address);
    },
    async connect(host, port, timeoutMs) {
      const { connect } = await import('node:net');
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ host, port });
        const timer = setTimeout(() => {
          socket.destroy();
          reject(new TimeoutError(`no connection within ${timeoutMs} ms`));
        }, timeoutMs);
        socket.once('connect', () => {
          clearTimeout(timer);
          socket.destroy();
          resolve();
        });
        socket.once('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      });
    },
    async tls(target) {
      const { connect } = await import('node:tls');
      return new Promise<TlsInfo>((resolve, reject) => {
        // Not rejected here: an untrusted certificate is reported (issuer, expiry), not hidden.
        const socket = connect({
          host: target.host,
          port: target.port,
          servername: isIpAddress(target.servername) ? '' : target.servername,
          ...(target.ca === undefined ? {} : { ca: target.ca }),
          rejectUnauthorized: false,
        });
        const timer = setTimeout(() => {
          socket.destroy();
          reject(new TimeoutError(`no TLS handshake within ${target.timeoutMs} ms`));
        }, target.timeoutMs);
        socket.once('secureConnect', () => {
          clearTimeout(timer);
          const certificate = socket.getPeerCertificate();
          const issuer = [certificate.issuer?.CN, certificate.issuer?.O]
            .filter((part): part is string => typeof part === 'string' && part !== '')
            .join(', ');
          const error = socket.authorizationError as unknown;
          resolve({
            protocol: socket.getProtocol(),
            issuer,
            validTo: new Date(certificate.valid_to),
            authorized: socket.authorized,
            authorizationError:
              error === undefined || error === null
                ? undefined
                : typeof error === 'string'
                  ? error
                  : ((error as { code?: string }).code ?? String(error)),
          });
          socket.destroy();
        });
        socket.once('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      });
    },
    now: () => performance.now(),
  };
}

export function isIpAddress(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');
}
