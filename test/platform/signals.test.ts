/**
 * Which signals stop a command on each platform, given an emitter for the process: Ctrl+Break
 * (SIGBREAK) exists only on Windows and cannot be sent on Linux, so it is checked here.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { stopSignalHandlers, stopSignals } from '../../src/platform/signals.js';

/** A process's signal events, with the exit codes asked for. */
function fakeProcess() {
  const emitter = new EventEmitter();
  const exits: number[] = [];
  return { emitter, exits, send: (signal: string) => emitter.emit(signal, signal) };
}

describe('the signals that stop ugs', () => {
  it.each([
    ['win32', ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK']],
    ['darwin', ['SIGINT', 'SIGTERM', 'SIGHUP']],
    ['linux', ['SIGINT', 'SIGTERM', 'SIGHUP']],
  ] as const)('%s: %j', (platform, expected) => {
    expect(stopSignals(platform).map(([signal]) => signal)).toEqual(expected);
  });

  it('SIGBREAK counts as SIGINT, SIGHUP as SIGTERM', () => {
    expect(Object.fromEntries(stopSignals('win32'))).toMatchObject({
      SIGBREAK: 'SIGINT',
      SIGHUP: 'SIGTERM',
    });
  });

  it.each(['SIGBREAK', 'SIGHUP', 'SIGINT'])(
    'win32: %s reaches the command, and a second one after it unsubscribed exits 130',
    (signal) => {
      const proc = fakeProcess();
      const handlers = stopSignalHandlers(proc.emitter, 'win32', (code) => proc.exits.push(code));
      const heard: string[] = [];
      const unsubscribe = handlers.onSignal((name) => heard.push(name));
      proc.send(signal);
      expect(heard).toEqual([signal]);
      unsubscribe();
      proc.send(signal);
      expect(heard).toEqual([signal]);
      expect(proc.exits).toEqual([130]);
    },
  );

  it('linux: no SIGBREAK listener (nothing can send it)', () => {
    const proc = fakeProcess();
    const handlers = stopSignalHandlers(proc.emitter, 'linux', () => {});
    const heard: string[] = [];
    handlers.onSignal((name) => heard.push(name));
    expect(proc.emitter.listenerCount('SIGBREAK')).toBe(0);
    proc.send('SIGHUP');
    expect(heard).toEqual(['SIGHUP']);
  });

  it('ugs serve stops on Ctrl+Break on Windows', async () => {
    const proc = fakeProcess();
    const stopped = stopSignalHandlers(proc.emitter, 'win32', () => {}).waitForShutdown();
    proc.send('SIGBREAK');
    expect(await stopped).toBe('SIGBREAK');
  });
});
