/**
 * Response schemas of the hot routes. Fastify compiles them into fast-json-stringify serializers,
 * which is most of what keeps the sandbox above 5,000 requests/s. They list every field the sandbox
 * emits; a field missing here would silently vanish from answers.
 */

const str = { type: "string" } as const;

export const controlSchema = {
  type: "object",
  properties: {
    id: str,
    type: str,
    set_by: str,
    is_overridable: { type: "boolean" },
    reason_code: str,
    reason: str,
    created_at: str,
    deleted_at: str,
  },
  required: ["id", "type", "set_by", "is_overridable", "reason_code", "reason", "created_at"],
} as const;

export const controlListSchema = {
  type: "object",
  properties: {
    items: { type: "array", items: controlSchema },
    next_page_cursor: str,
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
    summary_status: str,
    user_disabled: { type: "boolean" },
    admin_disabled: { type: "boolean" },
    type: str,
    created_at: str,
    updated_at: str,
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
    next_page_cursor: str,
  },
  required: ["items", "next_page_cursor"],
} as const;
