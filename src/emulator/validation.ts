import { MAX_JSON_DEPTH, setOwn } from '../input/parse.js';
import { isPlainObject } from '../platform/guards.js';
import { jsonNestingDepth } from '../text/json-lexer.js';
import type { GetOrCreateInput, JsonObject } from './store.js';

/**
 * A request the emulator refuses. `body` is what Django REST Framework would answer (without
 * the `success: 0` the handler adds): `{"detail": "..."}` for a refusal of the whole request,
 * `{"<field>": ["..."]}` for field errors.
 */
/**
 * Marks a RequestError whichever copy of this module made it: the routes come from the
 * operations of ugs's own bundle (passed to startEmulator), the handler from the emulator's
 * bundle, so one process holds two RequestError classes and `instanceof` would miss a refusal.
 */
const REQUEST_ERROR = Symbol.for('ugs.emulator.RequestError');

export class RequestError extends Error {
  readonly [REQUEST_ERROR] = true;

  /** A RequestError from either copy of this module (see REQUEST_ERROR). */
  static is(value: unknown): value is RequestError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[REQUEST_ERROR] === true
    );
  }

  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof body.detail === 'string' ? body.detail : JSON.stringify(body));
    this.name = 'RequestError';
  }

  /** What the access log (`ugs serve --debug`) adds about this refusal; never in the answer. */
  log: { id?: string; note: string } | undefined;

  /** This error, with a note for the access log. */
  withLog(note: string, id?: string): this {
    this.log = { note, ...(id !== undefined && { id }) };
    return this;
  }

  static detail(status: number, text: string, headers?: Record<string, string>): RequestError {
    return new RequestError(status, { detail: text }, headers);
  }
}

/** The Python type name DRF puts in its messages, e.g. 'Expected a dictionary ... type "list"'. */
function pythonType(value: unknown): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  switch (typeof value) {
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(value) ? 'int' : 'float';
    case 'string':
      return 'str';
    default:
      return 'dict';
  }
}

/**
 * Parses a request body that must be a JSON object. An empty body is an empty object, as DRF
 * reads a request without content: the missing fields are then reported one by one.
 */
export function parseJsonObject(body: string): Record<string, unknown> {
  if (body === '') return {};
  // Checked on the text, before parsing: JSON.parse itself recurses, and a body nested
  // thousands deep must be refused cheaply, never reach the store or the data file.
  if (jsonNestingDepth(body) > MAX_JSON_DEPTH) {
    throw RequestError.detail(
      400,
      `JSON parse error - nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw RequestError.detail(400, `JSON parse error - ${why}`);
  }
  if (!isPlainObject(parsed)) {
    throw new RequestError(400, {
      non_field_errors: [`Invalid data. Expected a dictionary, but got ${pythonType(parsed)}.`],
    });
  }
  return parsed;
}

/** Collects field errors the way a DRF serializer does: every field checked, all reported. */
class FieldErrors {
  private readonly errors: Record<string, unknown> = {};
  private any = false;

  add(field: string, error: unknown): void {
    setOwn(this.errors, field, error);
    this.any = true;
  }

  throwIfAny(): void {
    if (this.any) throw new RequestError(400, this.errors);
  }
}

function requiredString(body: Record<string, unknown>, field: string, errors: FieldErrors): string {
  const value = Object.hasOwn(body, field) ? body[field] : undefined;
  if (value === undefined) errors.add(field, ['This field is required.']);
  else if (value === null) errors.add(field, ['This field may not be null.']);
  else if (typeof value !== 'string') errors.add(field, ['Not a valid string.']);
  else if (value.trim() === '') errors.add(field, ['This field may not be blank.']);
  else return value;
  return '';
}

/** An optional object field: undefined when absent, else a plain object or a field error. */
function optionalObject(
  body: Record<string, unknown>,
  field: string,
  errors: FieldErrors,
): Record<string, unknown> | undefined {
  if (!Object.hasOwn(body, field)) return undefined;
  const value = body[field];
  if (value === null) errors.add(field, ['This field may not be null.']);
  else if (!isPlainObject(value)) {
    errors.add(field, [`Expected a dictionary of items but got type "${pythonType(value)}".`]);
  } else return value;
  return undefined;
}

/**
 * An optional list of strings (`emails`, `group_tags`): undefined when absent, else the list or
 * a field error worded as DRF's ListField of CharFields.
 */
function optionalStringList(
  body: Record<string, unknown>,
  field: string,
  errors: FieldErrors,
): string[] | undefined {
  if (!Object.hasOwn(body, field)) return undefined;
  const value = body[field];
  if (!Array.isArray(value)) {
    errors.add(field, [`Expected a list of items but got type "${pythonType(value)}".`]);
  } else if (!value.every((item) => typeof item === 'string')) {
    errors.add(field, ['Not a valid string.']);
  } else return value;
  return undefined;
}

/**
 * An optional name that may be null (a hierarchy level, a parent's id): undefined when absent,
 * null to say "none", else a string that is not blank.
 */
function optionalNullableText(
  body: Record<string, unknown>,
  field: string,
  errors: FieldErrors,
): string | null | undefined {
  if (!Object.hasOwn(body, field)) return undefined;
  const value = body[field];
  if (value === null) return null;
  if (typeof value !== 'string') errors.add(field, ['Not a valid string.']);
  else if (value.trim() === '') errors.add(field, ['This field may not be blank.']);
  else return value;
  return undefined;
}

/**
 * Get User's body, and the Customer API's create_customer/ (`--dialect customer`), whose id is
 * `provided_id` and which also takes `emails`, `group_tags` (the vendor's own example sends
 * both), `hierarchy_level_name` and `parent_provided_id`. The parent is named by its id: the
 * route finds it, and refuses one the environment does not hold.
 */
export interface CreateInput extends Omit<GetOrCreateInput, 'parent'> {
  /** The parent's `provided_id`; undefined or null for none. */
  parentId?: string | null;
}

export function parseGetUserBody(text: string, idField = 'user_group_id'): CreateInput {
  const body = parseJsonObject(text);
  const errors = new FieldErrors();
  const name = requiredString(body, 'name', errors);
  const userGroupId = requiredString(body, idField, errors);
  // The other dialects have none of these fields: left unread there, as before.
  const customer = idField === 'provided_id';
  const emails = customer ? optionalStringList(body, 'emails', errors) : undefined;
  const groupTags = customer ? optionalStringList(body, 'group_tags', errors) : undefined;
  const hierarchyLevel = customer
    ? optionalNullableText(body, 'hierarchy_level_name', errors)
    : undefined;
  const parentId = customer ? optionalNullableText(body, 'parent_provided_id', errors) : undefined;

  let mapping: Record<string, string> | undefined;
  const rawMapping = optionalObject(body, 'mapping', errors);
  if (rawMapping !== undefined) {
    mapping = {};
    const valueErrors: Record<string, string[]> = {};
    let bad = false;
    for (const [key, value] of Object.entries(rawMapping)) {
      // setOwn: a key named __proto__ is data like any other, never the object's prototype.
      if (typeof value === 'string') setOwn(mapping, key, value);
      else {
        setOwn(valueErrors, key, ['Not a valid string.']);
        bad = true;
      }
    }
    if (bad) errors.add('mapping', valueErrors);
  }

  const rawProperties = optionalObject(body, 'properties', errors);
  // The vendor's demo watermark: a JSON boolean (DRF's BooleanField would also take "true" or
  // 1; a client of ugs sends a boolean, and a stricter emulator catches one that does not).
  let isDemoGroup: boolean | undefined;
  if (Object.hasOwn(body, 'is_demo_group')) {
    const value = body.is_demo_group;
    if (typeof value === 'boolean') isDemoGroup = value;
    else errors.add('is_demo_group', ['Must be a valid boolean.']);
  }
  errors.throwIfAny();
  // Parsed from JSON, so every nested value is JSON too; JSON.parse keeps a "__proto__" key as
  // an own property, so nothing is lost by passing the object on as it is.
  const properties = rawProperties as JsonObject | undefined;
  return {
    userGroupId,
    name,
    mapping,
    properties,
    ...(isDemoGroup !== undefined && { isDemoGroup }),
    ...(emails !== undefined && { emails }),
    ...(groupTags !== undefined && { groupTags }),
    ...(hierarchyLevel !== undefined && { hierarchyLevel }),
    ...(parentId !== undefined && { parentId }),
  };
}

/**
 * The interface leaves an empty or unknown current_token open. The emulator answers a missing,
 * empty or non-string one with a 400 field error (the request itself is malformed) and an
 * unknown one with DRF's 404 "Not found." (well-formed, but no such user group in the caller's
 * environment), so a client has to handle both kinds of refusal.
 */
/** The Customer API's read-one: `{provided_id}`, required and not blank, as a DRF CharField. */
export function parseGetCustomerBody(text: string): string {
  const body = parseJsonObject(text);
  const errors = new FieldErrors();
  const id = requiredString(body, 'provided_id', errors);
  errors.throwIfAny();
  return id;
}

export function parseRotateBody(text: string): string {
  const body = parseJsonObject(text);
  const errors = new FieldErrors();
  const token = requiredString(body, 'current_token', errors);
  errors.throwIfAny();
  return token;
}

/** An update's body: the group it names and the fields it changes (absent ones stay). */
export interface UpdateInput {
  id: string;
  name?: string;
  mapping?: Record<string, string>;
  properties?: JsonObject;
  isDemoGroup?: boolean;
  /** The Customer API's rename (`new_provided_id`). */
  newId?: string;
  // The Customer API's own fields; `hierarchyLevel` and `parentId` null remove the level or the
  // parent.
  emails?: string[];
  /** Replaces the group's tags; `[]` clears them. */
  groupTags?: string[];
  hierarchyLevel?: string | null;
  /** The new parent's `provided_id` (the route finds it in the environment). */
  parentId?: string | null;
}

/**
 * Update User Group (`user_group_id`) or the Customer API's Update Customer (`provided_id`):
 * every field optional but the id, each checked as a DRF serializer would. The Customer API's
 * `emails`, `group_tags`, `hierarchy_level` and `parent_provided_id` are read in that dialect
 * only (the explo update has no such fields).
 */
export function parseUpdateBody(text: string, customer: boolean): UpdateInput {
  const body = parseJsonObject(text);
  const errors = new FieldErrors();
  const id = requiredString(body, customer ? 'provided_id' : 'user_group_id', errors);
  const name = Object.hasOwn(body, 'name') ? requiredString(body, 'name', errors) : undefined;
  const newId =
    customer && Object.hasOwn(body, 'new_provided_id')
      ? requiredString(body, 'new_provided_id', errors)
      : undefined;
  const mapping = stringMap(optionalObject(body, 'mapping', errors), errors);
  const properties = optionalObject(body, 'properties', errors) as JsonObject | undefined;
  let isDemoGroup: boolean | undefined;
  if (Object.hasOwn(body, 'is_demo_group')) {
    if (typeof body.is_demo_group === 'boolean') isDemoGroup = body.is_demo_group;
    else errors.add('is_demo_group', ['Must be a valid boolean.']);
  }
  const emails = customer ? optionalStringList(body, 'emails', errors) : undefined;
  const groupTags = customer ? optionalStringList(body, 'group_tags', errors) : undefined;
  const hierarchyLevel = customer
    ? optionalNullableText(body, 'hierarchy_level', errors)
    : undefined;
  const parentId = customer ? optionalNullableText(body, 'parent_provided_id', errors) : undefined;
  errors.throwIfAny();
  return {
    id,
    ...(name !== undefined && { name }),
    ...(mapping !== undefined && { mapping }),
    ...(properties !== undefined && { properties }),
    ...(isDemoGroup !== undefined && { isDemoGroup }),
    ...(newId !== undefined && { newId }),
    ...(emails !== undefined && { emails }),
    ...(groupTags !== undefined && { groupTags }),
    ...(hierarchyLevel !== undefined && { hierarchyLevel }),
    ...(parentId !== undefined && { parentId }),
  };
}

/** A mapping's values must be strings; each one that is not is its own error, as DRF says it. */
function stringMap(
  raw: Record<string, unknown> | undefined,
  errors: FieldErrors,
): Record<string, string> | undefined {
  if (raw === undefined) return undefined;
  const mapping: Record<string, string> = {};
  const valueErrors: Record<string, string[]> = {};
  let bad = false;
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value === 'string') setOwn(mapping, key, value);
    else {
      setOwn(valueErrors, key, ['Not a valid string.']);
      bad = true;
    }
  }
  if (bad) errors.add('mapping', valueErrors);
  return mapping;
}
