/**
 * Per-test wiring for the HTTP-layer tests (in-process, no binary): real servers on 127.0.0.1, real undici clients with
 * an injected `sleep` that records the delays it was asked for (so backoff costs nothing), and
 * clean-up of both after every test.
 */
import { afterEach, expect } from 'vitest';
import { operations } from '../../src/commands/operations.js';
import { UgsError } from '../../src/errors.js';
import type { Tracer } from '../../src/output/debug.js';
import { HttpServiceClient } from '../../src/service/service.js';
import { createHttpClient, type HttpClient } from '../../src/transport/http.js';
import { rejection } from './fakes.js';
import { type Reply, startServer, type TestServer } from './server.js';

export const API_TOKEN = 'ugs_api_S3CRET_9f8e7d6c5b4a';
export const USER_AGENT = 'ugs/test node/20';

export interface ClientOptions {
  timeoutMs?: number;
  tracer?: Tracer;
  random?: () => number;
  maxResponseBytes?: number;
  /** Runs inside the fake sleep, before it resolves (e.g. to bring a server up). */
  onSleep?: (ms: number, call: number) => void | Promise<void>;
}

export interface Client {
  http: HttpClient;
  service: HttpServiceClient;
  /** Every delay the client asked to sleep, in order. */
  sleeps: number[];
}

export interface Harness {
  server(...replies: Reply[]): Promise<TestServer>;
  /** A client for `baseUrl` (a string such as `${server.origin}/prefix`). */
  client(baseUrl: string, options?: ClientOptions): Promise<Client>;
  /** Registers something to close after the test. */
  track(closable: { close(): Promise<void> }): void;
}

export function useHttpClients(): Harness {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close().catch(() => {})));
  });
  return {
    async server(...replies) {
      const server = await startServer(...replies);
      open.push(server);
      return server;
    },
    async client(baseUrl, options = {}) {
      const sleeps: number[] = [];
      const http = await createHttpClient({
        timeoutMs: options.timeoutMs ?? 5_000,
        env: {},
        ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
        ...(options.random === undefined ? {} : { random: options.random }),
        ...(options.maxResponseBytes === undefined
          ? {}
          : { maxResponseBytes: options.maxResponseBytes }),
        sleep: async (ms) => {
          sleeps.push(ms);
          await options.onSleep?.(ms, sleeps.length);
        },
      });
      open.push(http);
      const service = new HttpServiceClient(
        http,
        { baseUrl: new URL(baseUrl), apiToken: API_TOKEN },
        USER_AGENT,
        { operations },
      );
      return { http, service, sleeps };
    },
    track(closable) {
      open.push(closable);
    },
  };
}

/** The error a promise rejects with, which must be a UgsError; fails the test when it resolves. */
export async function failure(promise: Promise<unknown>): Promise<UgsError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(UgsError);
  return error as UgsError;
}

export const GET_REQUEST = { name: 'Acme', user_group_id: 'acme-1' } as const;
