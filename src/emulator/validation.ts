import type { GetOrCreateInput, JsonObject } from './store.js';

/** A request the emulator refuses; status and message go to the client as is. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'RequestError';
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses a request body that must be a JSON object. */
export function parseJsonObject(body: string): Record<string, unknown> {
  if (body.trim() === '') {
    throw new RequestError(400, 'request body is empty; expected a JSON object');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new RequestError(400, 'request body is not valid JSON');
  }
  if (!isPlainObject(parsed)) {
    throw new RequestError(400, 'request body must be a JSON object');
  }
  return parsed;
}

function requireNonEmptyString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value === '') {
    throw new RequestError(400, `${field} is required and must be a non-empty string`);
  }
  return value;
}

export function parseGetUserBody(text: string): GetOrCreateInput {
  const body = parseJsonObject(text);
  const userGroupId = requireNonEmptyString(body, 'user_group_id');
  const name = requireNonEmptyString(body, 'name');

  let mapping: Record<string, string> | undefined;
  if (body.mapping !== undefined) {
    if (!isPlainObject(body.mapping)) {
      throw new RequestError(400, 'mapping must be a JSON object whose values are strings');
    }
    mapping = {};
    for (const [key, value] of Object.entries(body.mapping)) {
      if (typeof value !== 'string') {
        throw new RequestError(
          400,
          `mapping value for key ${JSON.stringify(key)} must be a string, got ${describe(value)}`,
        );
      }
      mapping[key] = value;
    }
  }

  let properties: JsonObject | undefined;
  if (body.properties !== undefined) {
    if (!isPlainObject(body.properties)) {
      throw new RequestError(
        400,
        `properties must be a JSON object, got ${describe(body.properties)}`,
      );
    }
    // Parsed from JSON, so every nested value is JSON too.
    properties = body.properties as JsonObject;
  }
  return { userGroupId, name, mapping, properties };
}

/**
 * The interface leaves an empty or unknown current_token open. The emulator answers a missing,
 * empty or non-string one with 400 (the request itself is malformed) and an unknown one with 404
 * (well-formed, but no such user group in the caller's environment), both with success 0, so a
 * client has to handle both kinds of refusal.
 */
export function parseRotateBody(text: string): string {
  return requireNonEmptyString(parseJsonObject(text), 'current_token');
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' || type === 'undefined' ? `an ${type}` : `a ${type}`;
}
