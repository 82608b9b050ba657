// Named conditions (`conditions: { canary: '...' }`, used as `$canary` in a rule) shown expanded:
// a rule reading `$canary && req_path_prefix_in("/api", false)` is shown with what `$canary`
// stands for, so the page answers "what does this rule match" without a second lookup. Pure.

const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;

/**
 * `cond` with every `$name` outside string literals replaced by `(its text)`, recursively (a
 * name already being expanded, or unknown, stays as written).
 */
export function expand(cond, named, seen = new Set()) {
  let out = '';
  let i = 0;
  while (i < cond.length) {
    const ch = cond[i];
    if (ch === '"' || ch === "'") {
      // A string literal is copied as it is, escapes included.
      let j = i + 1;
      while (j < cond.length && cond[j] !== ch) j += cond[j] === '\\' ? 2 : 1;
      out += cond.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (ch === '$') {
      NAME.lastIndex = i + 1;
      const m = NAME.exec(cond);
      const name = m?.[0];
      if (name !== undefined && Object.hasOwn(named ?? {}, name) && !seen.has(name)) {
        out += `(${expand(named[name], named, new Set([...seen, name]))})`;
        i += 1 + name.length;
        continue;
      }
    }
    out += ch;
    i++;
  }
  return out;
}

/** True when `cond` names a condition of `named` (so there is an expansion worth showing). */
export function usesNamed(cond, named) {
  return expand(cond, named) !== cond;
}
