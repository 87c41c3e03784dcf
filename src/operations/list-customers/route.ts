/**
 * List Customers in the emulator: DRF's PageNumberPagination over the groups of the API key's
 * environment, in the order they were created (stable while nothing is created or removed).
 * `page_size` above the cap is refused with a field error; a page past the last is DRF's 404.
 */
import { customerObject } from '../../emulator/customer.js';
import type { Route } from '../../emulator/route.js';
import { RequestError } from '../../emulator/validation.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './operation.js';

export const route: Route = {
  async handle({ store, environment, query }) {
    const pageSize = pageSizeOf(query.get('page_size'));
    const page = pageOf(query.get('page'));
    // django-filter's way: a filter given empty is no filter; both given, a group must match
    // both. `parent_provided_id` matches the parent's direct children (an id no group holds
    // matches none); `hierarchy_level` the level's name, exactly.
    const parentId = query.get('parent_provided_id') || undefined;
    const level = query.get('hierarchy_level') || undefined;
    const parent = parentId === undefined ? undefined : store.find(environment, parentId);
    const groups = store
      .inEnvironment(environment)
      .filter(
        (group) =>
          (parentId === undefined || (parent !== undefined && group.parent === parent)) &&
          (level === undefined || group.hierarchyLevel === level),
      );
    // Django's Paginator: an empty list still has its page 1.
    const last = Math.max(1, Math.ceil(groups.length / pageSize));
    if (page > last) throw RequestError.detail(404, 'Invalid page.');
    const customers = groups.slice((page - 1) * pageSize, page * pageSize).map(customerObject);
    return {
      status: 200,
      body: { total_count: groups.length, results: { customers } },
      outcome: 'listed',
      id: '',
    };
  },
};

function pageSizeOf(text: string | null): number {
  if (text === null || text === '') return DEFAULT_PAGE_SIZE;
  const size = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(size) || size < 1) {
    throw new RequestError(400, { page_size: ['A valid integer is required.'] });
  }
  if (size > MAX_PAGE_SIZE) {
    throw new RequestError(400, {
      page_size: [`Ensure this value is less than or equal to ${MAX_PAGE_SIZE}.`],
    });
  }
  return size;
}

/** DRF's paginator: a page that is no positive integer is an invalid page, as one past the end. */
function pageOf(text: string | null): number {
  if (text === null || text === '') return 1;
  const page = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(page) || page < 1) throw RequestError.detail(404, 'Invalid page.');
  return page;
}
