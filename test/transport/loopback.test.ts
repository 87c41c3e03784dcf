import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src/input/parse.js';
import { stripInterimContinue } from '../../src/transport/undici.js';

describe('isLoopbackHost (hosts that never go through a proxy)', () => {
  it.each([
    'http://localhost:1/',
    'http://LOCALHOST./',
    'http://127.0.0.1/',
    'http://127.1/',
    'http://127.255.255.254/',
    'http://0x7f.0.0.1/',
    'http://[::1]:8080/',
    'http://[0:0:0:0:0:0:0:1]/',
    'http://[::ffff:127.0.0.1]/',
  ])('%s is loopback', (url) => {
    expect(isLoopbackHost(new URL(url).hostname)).toBe(true);
  });

  it.each([
    'http://example.com/',
    'http://localhost.example.com/',
    'http://mylocalhost/',
    // Its resolver decides where a name under .localhost goes.
    'http://api.localhost/',
    'http://128.0.0.1/',
    'http://10.0.0.1/',
    'http://[::2]/',
    'http://[::ffff:10.0.0.1]/',
    'http://0.0.0.0/',
  ])('%s is not', (url) => {
    expect(isLoopbackHost(new URL(url).hostname)).toBe(false);
  });
});

describe('stripInterimContinue', () => {
  const strip = (text: string) =>
    stripInterimContinue(Buffer.from(text, 'latin1')).toString('latin1');
  it.each([
    ['HTTP/1.1 100 Continue\r\n\r\n', ''],
    ['HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n', 'HTTP/1.1 200 OK\r\n\r\n'],
    [
      'HTTP/1.0 100\r\nX: y\r\n\r\nHTTP/1.1 100 C\r\n\r\nHTTP/1.1 200 OK\r\n',
      'HTTP/1.1 200 OK\r\n',
    ],
  ])('takes the interim answer off %j', (input, output) => {
    expect(strip(input)).toBe(output);
  });
  it.each([
    'HTTP/1.1 200 OK\r\n\r\n{}',
    'HTTP/1.1 1000 x\r\n\r\n',
    'HTTP/1.1 100 Continue\r\n\r\n{"body": "not a status line"}',
    'HTTP/1.1 100 Continue\r\n',
    '{"a": "HTTP/1.1 100 Continue\r\n\r\n"}',
  ])('leaves %j alone', (input) => {
    expect(strip(input)).toBe(input);
  });
});
