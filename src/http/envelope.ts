/** The success body of docs/api.md#answers. */
export function ok<T>(data: T) {
  return { success: true as const, data };
}

/** A list page: `data` plus `pagination.next_cursor`. */
export function okList<T>(data: T[], nextCursor: string | null) {
  return { success: true as const, data, pagination: { next_cursor: nextCursor } };
}
