/** Paging arithmetic for the table. Pages are 0-based internally, shown 1-based. */

export const DEFAULT_PAGE_SIZE = 50;

export interface PageInfo {
  page: number;
  pageCount: number;
  start: number;
  end: number;
}

export function pageInfo(total: number, page: number, pageSize = DEFAULT_PAGE_SIZE): PageInfo {
  const pageCount = Math.max(1, Math.ceil(total / pageSize));
  const clamped = Math.min(Math.max(0, Math.floor(page)), pageCount - 1);
  const start = clamped * pageSize;
  return { page: clamped, pageCount, start, end: Math.min(total, start + pageSize) };
}

export function pageSlice<T>(items: readonly T[], page: number, pageSize = DEFAULT_PAGE_SIZE): T[] {
  const info = pageInfo(items.length, page, pageSize);
  return items.slice(info.start, info.end);
}
