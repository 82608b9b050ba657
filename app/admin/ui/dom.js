// Small DOM helpers: elements are built with textContent only (config values are never parsed as HTML).

/** `h('td', { class: 'x', dataset: { id } }, 'text', child)`: an element with attributes and children. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Replaces the children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) el.append(c);
  return el;
}

/** A table with a header row. */
export function table(headers, rows, props = {}) {
  return h(
    'table',
    props,
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headers.map((x) => h('th', {}, x)),
      ),
    ),
    h('tbody', {}, rows),
  );
}

/** `1234.5` → `1.2k`; rates and counts. */
export function num(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return '–';
  const a = Math.abs(n);
  if (a >= 1e9) return `${(n / 1e9).toFixed(1)}G`;
  if (a >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return Number.isInteger(n) ? String(n) : n.toFixed(a < 10 ? 2 : 1);
}

/** A byte count, human units: `1234` → `1.2 kB`. */
export function total(n) {
  if (!n) return '0 B';
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${n.toFixed(n < 10 && i > 0 ? 1 : 0)} ${units[i]}`;
}

/** Bytes per second, human units. */
export function bytes(n) {
  return `${total(n)}/s`;
}

/** How long from `then` to `now` (ms), coarse: `42s`, `5m`, `3h 10m`, `2d 4h`. */
export function age(then, now) {
  const s = Math.max(0, Math.round((now - then) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const hours = Math.floor(m / 60);
  if (hours < 48) return `${hours}h ${m % 60}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/**
 * Marks `tableEl` to stack under 40rem (style.css `.stack`): each cell gets its column's header
 * as `data-label`, shown before its value, so a narrow screen never scrolls sideways.
 */
export function stack(tableEl) {
  tableEl.classList.add('stack');
  const headers = [...tableEl.querySelectorAll('thead th')].map((th) => th.textContent);
  for (const tr of tableEl.querySelectorAll('tbody tr')) {
    [...tr.children].forEach((td, i) => {
      if (headers[i]) td.dataset.label = headers[i];
    });
  }
  return tableEl;
}

/** An ISO time as local `HH:MM:SS`. */
export function clock(iso) {
  if (!iso) return '–';
  return new Date(iso).toLocaleTimeString([], { hour12: false });
}

/** Milliseconds as the config writes durations: `600000` → `10m`, `1500` → `1.5s`, `100` → `100ms`. */
export function dur(ms) {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1000) return `${ms / 1000}s`;
  return `${ms}ms`;
}
