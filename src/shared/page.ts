/** One page of a list: at most `limit` rows after skipping `offset` (DRF's LimitOffsetPagination). */
export interface Page {
  limit: number
  offset: number
}
