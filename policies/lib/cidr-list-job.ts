/** Types only: what the list-load thread (cidr-list-worker.ts) is given and answers (cidr-list-load.ts). */

/** What a list-load thread answers. */
export type ListLoadAnswer =
  | {
      readonly ok: true;
      readonly v4Starts: Uint32Array;
      readonly v4Ends: Uint32Array;
      readonly v6Starts: Uint32Array;
      readonly v6Ends: Uint32Array;
    }
  | { readonly ok: false; readonly file: string; readonly line: number; readonly entry: string };

/** What a list-load thread is given. */
export interface ListLoadJob {
  readonly bytes: Uint8Array;
  readonly file: string;
}
