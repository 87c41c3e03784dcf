/**
 * Raised when the emulator cannot start. The message is meant to be shown to a person as is,
 * so it names the thing that is wrong (path, port, pid) and never contains a token.
 */
export class EmulatorStartError extends Error {
  override name = 'EmulatorStartError';
}

/**
 * A command-line style spec (fault, API token) that cannot be parsed. It extends
 * EmulatorStartError because a bad spec is one more reason the emulator cannot start, so a
 * caller that catches start errors also catches these.
 */
export class EmulatorSpecError extends EmulatorStartError {
  override name = 'EmulatorSpecError';
}
