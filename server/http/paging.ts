// GitLab's pagination, for every list that can grow without bound: `page` from 1 and `per_page`
// rows in, X-Total, X-Total-Pages, X-Page, X-Per-Page, X-Next-Page, X-Prev-Page and a Link header
// (first, prev, next, last) out, so a client written against GitLab's API follows pages unchanged.
// The query's bounds are the contract's PageQuery (contract/jobs.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Rows per page of a list of things (runners, projects, users) when no per_page is given: the builds list's `limit`. */
export const LIST_PER_PAGE = 100;

/** What a paged list's summary adds, for the API docs. */
export const PAGED = `paged with \`page\` and \`per_page\` (default ${LIST_PER_PAGE}, at most 1000), X-Total… and Link headers`;

export interface Paging {
  page: number;
  perPage: number;
  offset: number;
}

/** `limit` is the older name of `per_page`, kept for callers written before lists had pages. */
export function paging(q: { page?: number; per_page?: number; limit?: number }, fallback: number): Paging {
  const page = q.page ?? 1;
  const perPage = q.per_page ?? q.limit ?? fallback;
  return { page, perPage, offset: (page - 1) * perPage };
}

/** The request's own URL with `page` (and `per_page`) replaced: the targets of the Link header. */
function pageUrl(request: FastifyRequest, page: number, perPage: number): string {
  const url = new URL(request.url, `${request.protocol}://${request.host}`);
  url.searchParams.set('page', String(page));
  url.searchParams.set('per_page', String(perPage));
  // The admin token may ride in the query (private_token): a link must not repeat it.
  url.searchParams.delete('private_token');
  return url.toString();
}

/** GitLab's pagination headers for one page of `total` rows. */
export function pageHeaders(reply: FastifyReply, { page, perPage }: Paging, total: number): void {
  const pages = Math.max(1, Math.ceil(total / perPage));
  const link = (p: number, rel: string) => `<${pageUrl(reply.request, p, perPage)}>; rel="${rel}"`;
  const links = [
    ...(page > 1 ? [link(Math.min(page - 1, pages), 'prev')] : []),
    ...(page < pages ? [link(page + 1, 'next')] : []),
    link(1, 'first'),
    link(pages, 'last'),
  ];
  reply.headers({
    'X-Total': String(total),
    'X-Total-Pages': String(pages),
    'X-Page': String(page),
    'X-Per-Page': String(perPage),
    'X-Next-Page': page < pages ? String(page + 1) : '',
    'X-Prev-Page': page > 1 ? String(Math.min(page - 1, pages)) : '',
    Link: links.join(', '),
  });
}

/** One page of rows already in memory, with its headers. */
export function pageOf<T>(reply: FastifyReply, p: Paging, all: readonly T[]): T[] {
  pageHeaders(reply, p, all.length);
  return all.slice(p.offset, p.offset + p.perPage);
}
