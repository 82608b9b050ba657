/**
 * The live members of a long-lived collection that connections join and leave (the open
 * connections of a listener pipeline, the drainable connections, the connections of an idle
 * ticker): a doubly linked list of small nodes, used instead of a `Set` (issue 18).
 *
 *   add(value) ─► node (the caller keeps it) ─► remove(node): unlinked, and its links cleared
 *
 * Why not a `Set`: V8's scavenger treats every pointer from an old-generation object into the
 * young generation as a root, live or not, until the next full collection. A `Set` that lives
 * in the old generation rehashes into a new table as members come and go, and what it leaves
 * behind still points at the members it held. The members of a connection, and everything they
 * reach, then survive the scavenges after the connection has closed and are promoted. On the
 * bench machine the net panel promoted 18% of what it allocated under `newconn` (scavenges of
 * 5–6 ms) against 1.3% for a floor that keeps no such set; without the pipeline's `Set` it was
 * 5% (bench/README "Promotion"). A removed node here is unlinked and its own links and value are
 * cleared, so nothing dead keeps a member.
 *
 * Walks take a copy (`values()`), so a member may leave, or others join, during the walk.
 */

/** One member's place in the list. */
export interface MemberNode<T> {
  /** The member; undefined once removed. */
  value: T | undefined;
  prev: MemberNode<T> | undefined;
  next: MemberNode<T> | undefined;
}

export class MemberList<T> {
  #head: MemberNode<T> | undefined = undefined;
  #size = 0;

  /** Members now. */
  get size(): number {
    return this.#size;
  }

  /** Adds `value` (at the front); returns its node, which `remove` takes. */
  add(value: T): MemberNode<T> {
    const node: MemberNode<T> = { value, prev: undefined, next: this.#head };
    if (this.#head !== undefined) this.#head.prev = node;
    this.#head = node;
    this.#size++;
    return node;
  }

  /** Removes the member of `node` (nothing when it was removed already). */
  remove(node: MemberNode<T>): void {
    if (node.value === undefined) return;
    const { prev, next } = node;
    if (prev !== undefined) prev.next = next;
    else this.#head = next;
    if (next !== undefined) next.prev = prev;
    node.value = undefined;
    node.prev = undefined;
    node.next = undefined;
    this.#size--;
  }

  /** The members now, newest first (a copy: the list may change while it is walked). */
  values(): T[] {
    const out: T[] = [];
    for (let n = this.#head; n !== undefined; n = n.next) out.push(n.value as T);
    return out;
  }

  /** Removes every member. */
  clear(): void {
    let n = this.#head;
    while (n !== undefined) {
      const next = n.next;
      n.value = undefined;
      n.prev = undefined;
      n.next = undefined;
      n = next;
    }
    this.#head = undefined;
    this.#size = 0;
  }
}
