/**
 * The signals that ask ugs to stop, per platform. SIGINT (Ctrl+C) and SIGTERM everywhere; SIGHUP
 * too (the terminal, ssh session or console window closed), which by default would kill the
 * process mid-run without settling what it had sent; and on Windows SIGBREAK (Ctrl+Break), which
 * is Ctrl+C there by another key. Each is handled as the stop it stands for: SIGHUP as SIGTERM,
 * SIGBREAK as SIGINT, so a bulk run settles its rows in flight and ends with exit 130 either way.
 * Only bin/ugs.js subscribes the real process; tests hand in an emitter and a platform.
 */
import type { Platform } from './host.js';

type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'SIGBREAK';

/** Each stopping signal of a platform, with the one it is handled as. */
export function stopSignals(
  on: Platform,
): readonly (readonly [StopSignal, 'SIGINT' | 'SIGTERM'])[] {
  const signals: [StopSignal, 'SIGINT' | 'SIGTERM'][] = [
    ['SIGINT', 'SIGINT'],
    ['SIGTERM', 'SIGTERM'],
    ['SIGHUP', 'SIGTERM'],
  ];
  // Elsewhere Node may listen for it but nothing can send it.
  if (on === 'win32') signals.push(['SIGBREAK', 'SIGINT']);
  return signals;
}

/** The part of `process` that signals are read from. */
export interface SignalSource {
  on(event: StopSignal, listener: (signal: string) => void): unknown;
  off(event: StopSignal, listener: (signal: string) => void): unknown;
  once(event: StopSignal, listener: (signal: string) => void): unknown;
  listenerCount(event: StopSignal): number;
}

export interface StopSignalHandlers {
  /** IO.onSignal: `listener` gets the signal's own name; returns the unsubscribe function. */
  onSignal(listener: (signal: string) => void): () => void;
  /** SystemInfo.waitForShutdown: resolves with the first stopping signal's name. */
  waitForShutdown(): Promise<string>;
}

/**
 * The process's stopping signals for main. `exit` ends the process with a code: a second signal
 * arriving after a command unsubscribed (it is finishing) still ends the run as interrupted (130),
 * not by the default action (a loaded machine makes that window long enough to hit).
 */
export function stopSignalHandlers(
  source: SignalSource,
  on: Platform,
  exit: (code: number) => void,
): StopSignalHandlers {
  const signals = stopSignals(on).map(([signal]) => signal);
  return {
    onSignal(listener) {
      // Node calls a signal listener with the signal's name; an emitter may not, so say it here.
      const handlers = signals.map((signal) => [signal, () => listener(signal)] as const);
      for (const [signal, handler] of handlers) source.on(signal, handler);
      return () => {
        for (const [signal, handler] of handlers) {
          source.off(signal, handler);
          if (source.listenerCount(signal) === 0) source.once(signal, () => exit(130));
        }
      };
    },
    waitForShutdown: () =>
      new Promise((resolve) => {
        for (const signal of signals) source.once(signal, () => resolve(signal));
      }),
  };
}
