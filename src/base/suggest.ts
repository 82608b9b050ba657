/**
 * "Did you mean": the closest known word to a misspelt one (Damerau–Levenshtein distance, an
 * adjacent swap counting as one edit), used by every "unknown …" message: config keys, enum
 * values, plugin names, condition primitives.
 */

/** Edits (insert, delete, substitute, swap two neighbours) turning `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known word closest to `word`, when it is close enough to be a typo: at most a third of its
 * length in edits (at least 1, at most 3; none for words under 3 characters), compared
 * case-insensitively. Undefined otherwise.
 */
export function suggest(word: string, known: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  const limit = w.length < 3 ? 0 : Math.min(3, Math.max(1, Math.floor(w.length / 3)));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const k of known) {
    if (k === word) continue;
    const distance = editDistance(w, k.toLowerCase());
    if (distance <= limit && distance < bestDistance) {
      best = k;
      bestDistance = distance;
    }
  }
  return best;
}

/** `; did you mean "x"?` for `word` among `known`, or ''. */
export function didYouMean(word: string, known: Iterable<string>): string {
  const s = suggest(word, known);
  return s === undefined ? '' : ` (did you mean ${JSON.stringify(s)}?)`;
}
