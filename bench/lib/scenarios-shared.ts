/** Constants every part of the bench agrees on (backend paths and body). */

/** The small response body every backend returns for GET /small. */
export const SMALL_BODY = 'hello world\n';
/** Path of the small response. */
export const SMALL_PATH = '/small';
/** Path of the 1 MiB response. */
export const BIG_PATH = '/1m';
/** Size of the big response. */
export const BIG_SIZE = 1 << 20;
