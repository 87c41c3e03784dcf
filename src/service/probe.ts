/**
 * Doctor's probe (`ugs doctor --probe`): a GET of the API path with the body `{}` (with the explo
 * dialect a POST of `{}` to the vendor's get-or-create path), which changes nothing. A DRF-style service checks the token before the fields, so it answers 400 (fields
 * missing) to a good token and 401/403 to a bad one. Sent by `service.ts` like every operation,
 * so the probe tests what `get` and `rotate` will meet: the same headers, transport (proxy, CA,
 * deadline) and the one slash redirect, no other.
 *
 * It has no command of its own (doctor words the result) and no emulator route: the emulator
 * answers `{}` with 400 through get's route, as the service does.
 */
import { isPlainObject } from '../platform/guards.js';
import { redactSecrets } from '../text/redact.js';
import type { Operation, ReceivedAnswer } from './operation.js';

export type ProbeVerdict =
  /** 400: the token passed, and the empty request was refused for its missing fields. */
  | 'accepted'
  /** 401 or 403: the token was refused. */
  | 'refused'
  /** Anything else: not the service at that address, or something in between. */
  | 'unexpected';

export interface ProbeResult {
  verdict: ProbeVerdict;
  status: number;
  /** The path that answered: the API path, or where the slash redirect led. */
  path: string;
  /** The `detail` of a DRF answer, secrets cut out; not yet escaped or shortened. */
  detail: string | undefined;
}

/**
 * With the facts the registry reads of every operation (`operations/descriptor.ts`, a layer up):
 * its body has no fields, and it changes nothing.
 */
export const probe: Operation<void, ProbeResult> & {
  fields: readonly string[];
  changesData: boolean;
} = {
  method: 'GET',
  // The vendor's API: get-or-create with `{}` is refused for its missing fields (400) once the
  // token was accepted, and creates nothing.
  explo: { method: 'POST', path: '/api/create_user_group/' },
  // Never repeated: a retried 429 or 503 would hide the answer the user asked to see.
  retry: { maxRetries: 0, retryStatuses: new Set(), retryErrorCodes: new Set() },
  body: () => ({}),
  secrets: () => [],
  readAnswer: readProbe,
  fields: [],
  changesData: false,
};

declare module './client.js' {
  interface ServiceOperations {
    probe: typeof probe;
  }
}

function readProbe(answer: ReceivedAnswer): ProbeResult {
  const { status } = answer;
  return {
    verdict:
      status === 400 ? 'accepted' : status === 401 || status === 403 ? 'refused' : 'unexpected',
    status,
    path: answer.url.pathname,
    detail: detailOf(answer),
  };
}

function detailOf(answer: ReceivedAnswer): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    // Not JSON: the status says enough.
    return undefined;
  }
  if (!isPlainObject(body) || typeof body.detail !== 'string') return undefined;
  return redactSecrets(body.detail, answer.secrets);
}
