/**
 * A stored group as the vendor's Customer API answers it (`--dialect customer`): its `customer`
 * object, with the fields the vendor documents. The emulator keeps no emails, tags, access group
 * or hierarchy, so those are empty; the mapping is the one stored.
 */
import type { JsonObject, UserGroup } from './store.js';

export function customerObject(group: UserGroup): JsonObject {
  return {
    token: group.token,
    name: group.name,
    provided_id: group.providedId,
    is_demo_group: group.isDemoGroup,
    emails: [],
    group_tags: [],
    properties: group.properties,
    computed_properties: group.properties,
    access_group: null,
    parent_schema_datasource_mapping: group.mapping,
    computed_parent_schema_datasource_mapping: group.mapping,
    hierarchy_level: null,
  };
}
