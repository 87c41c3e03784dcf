/**
 * List Customers (`--dialect customer` only): one page of the user groups the API key's
 * environment holds, as the vendor documents `GET /v2/api/customers/?page=N&page_size=M`. A
 * DRF list: the answer is `{total_count, results: {customers: [...]}}`, with no `success`
 * envelope, and its parameters go in the query, with no body. The other dialects have no list.
 */

import type { JsonObject } from '../../input/parse.js';
import { isPlainObject } from '../../platform/guards.js';
import type { SuccessAnswer, Unreadable } from '../../service/operation.js';
import { REPEATABLE_RETRY } from '../../transport/http.js';
import type { OperationDescriptor } from '../descriptor.js';

/** The vendor's page size when none is sent, and the most one page may hold. */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 1000;

export interface ListCustomersRequest {
  /** From 1. */
  page: number;
  /** 1 to MAX_PAGE_SIZE. */
  pageSize: number;
  /** Only the customers under this parent (`parent_provided_id`). */
  parent?: string;
  /** Only the customers of this hierarchy level (`hierarchy_level`). */
  level?: string;
}

/** One page: the customers as the service sent them, and how many there are in all. */
export interface CustomerPage {
  totalCount: number;
  customers: JsonObject[];
  /** The answer's text, which `--json` and `--ndjson` print the customers from. */
  text?: string;
}

export const listCustomers: OperationDescriptor<ListCustomersRequest, CustomerPage> = {
  // Only in the Customer API: no `method` (interface) and no `explo` wire.
  customer: { method: 'GET', path: '/v2/api/customers/', query: queryOf, bare: true },
  // A read: repeating it cannot change anything, so a lost answer is retried like a get's.
  retry: REPEATABLE_RETRY,
  // Never sent: the query carries the parameters (`customer.query`).
  body: () => ({}),
  secrets: () => [],
  read: readPage,
  fields: ['page', 'page_size', 'parent_provided_id', 'hierarchy_level'],
  changesData: false,
  hints: {
    // DRF's paginator: a page past the last is a 404 `{"detail": "Invalid page."}`.
    jsonNotFound: 'the page is past the last one: pass a smaller --page (or --all)',
  },
};

declare module '../../service/client.js' {
  interface ServiceOperations {
    listCustomers: typeof listCustomers;
  }
}

function queryOf(input: ListCustomersRequest): Record<string, string> {
  return {
    page: String(input.page),
    page_size: String(input.pageSize),
    ...(input.parent !== undefined && { parent_provided_id: input.parent }),
    ...(input.level !== undefined && { hierarchy_level: input.level }),
  };
}

function readPage(answer: SuccessAnswer): CustomerPage | Unreadable {
  const { body } = answer;
  const total = body.total_count;
  if (typeof total !== 'number' || !Number.isSafeInteger(total) || total < 0) {
    return { unreadable: 'the answer has no "total_count" count' };
  }
  const results = body.results;
  const customers = isPlainObject(results) ? results.customers : undefined;
  if (!Array.isArray(customers) || !customers.every(isPlainObject)) {
    return { unreadable: 'the answer has no "results.customers" list of objects' };
  }
  return { totalCount: total, customers: customers as JsonObject[], text: answer.text };
}
