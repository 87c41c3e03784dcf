/**
 * A stored group as the vendor's Customer API answers it (`--dialect customer`): its `customer`
 * object, with the fields the vendor documents. The emulator keeps the emails, tags and
 * hierarchy level it was sent; it has no access groups (null), and a group's computed
 * properties and mapping are its own (the service's inheritance from the parent is not
 * emulated). The vendor's object has no parent field: a parent shows in the list's
 * `parent_provided_id` filter.
 */
import type { Environment } from './auth.js';
import { descendsFrom, type JsonObject, type Store, type UserGroup } from './store.js';

export function customerObject(group: UserGroup): JsonObject {
  return {
    token: group.token,
    name: group.name,
    provided_id: group.providedId,
    is_demo_group: group.isDemoGroup,
    emails: [...group.emails],
    group_tags: [...group.groupTags],
    properties: group.properties,
    computed_properties: group.properties,
    access_group: null,
    parent_schema_datasource_mapping: group.mapping,
    computed_parent_schema_datasource_mapping: group.mapping,
    hierarchy_level: group.hierarchyLevel,
  };
}

/**
 * The parent a request names by `parent_provided_id`: a group of the caller's environment, or
 * null for none; else the message of its field error (DRF's SlugRelatedField words an unknown
 * one). `child` is the group being changed, with the id it will have: it cannot be its own
 * parent, nor the parent of one of its ancestors (a cycle).
 */
export function parentFor(
  store: Store,
  environment: Environment,
  parentId: string | null,
  child?: { group: UserGroup | undefined; id: string },
): { parent: UserGroup | null } | { error: string } {
  if (parentId === null) return { parent: null };
  if (child !== undefined && parentId === child.id) {
    return { error: 'A customer cannot be its own parent.' };
  }
  const parent = store.find(environment, parentId);
  if (parent === undefined) return { error: `Object with provided_id=${parentId} does not exist.` };
  if (child?.group !== undefined && descendsFrom(parent, child.group)) {
    return {
      error:
        parent === child.group
          ? 'A customer cannot be its own parent.'
          : 'A customer cannot be the parent of its own ancestor.',
    };
  }
  return { parent };
}
