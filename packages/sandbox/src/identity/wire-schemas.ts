/**
 * Response schemas of the hot routes. Fastify compiles them into fast-json-stringify serializers,
 * which is most of what keeps the sandbox above 5,000 requests/s. They list every field the sandbox
 * emits; a field missing here would silently vanish from answers.
 */

const str = { type: "string" } as const;
/**
 * Strings the sandbox writes itself (ISO dates, enum values, base64url cursors) never need JSON
 * escaping; fast-json-stringify's "unsafe" format skips the escape scan. Ids, types, set_by and
 * reasons may come from seeds of any content and stay escaped.
 */
const own = { type: "string", format: "unsafe" } as const;

export const controlSchema = {
  type: "object",
  properties: {
    id: str,
    type: str,
    set_by: str,
    is_overridable: { type: "boolean" },
    reason_code: str,
    reason: str,
    created_at: own,
    deleted_at: own,
  },
  required: ["id", "type", "set_by", "is_overridable", "reason_code", "reason", "created_at"],
} as const;

export const controlListSchema = {
  type: "object",
  properties: {
    items: { type: "array", items: controlSchema },
    next_page_cursor: own,
  },
  required: ["items", "next_page_cursor"],
} as const;

export const identitySchema = {
  type: "object",
  properties: {
    id: str,
    status_details: {
      type: "object",
      properties: { active_controls: { type: "array", items: controlSchema } },
      required: ["active_controls"],
    },
    summary_status: own,
    user_disabled: { type: "boolean" },
    admin_disabled: { type: "boolean" },
    type: own,
    created_at: own,
    updated_at: own,
  },
  required: [
    "id",
    "status_details",
    "summary_status",
    "user_disabled",
    "admin_disabled",
    "type",
    "created_at",
    "updated_at",
  ],
} as const;

export const identityListSchema = {
  type: "object",
  properties: {
    items: { type: "array", items: identitySchema },
    next_page_cursor: own,
  },
  required: ["items", "next_page_cursor"],
} as const;
