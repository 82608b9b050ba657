/**
 * The chunk-ext grammar of RFC 9112 §7.1.1, one byte at a time, for BodyTracker:
 *
 *   chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
 *   chunk-ext-name = token
 *   chunk-ext-val  = token / quoted-string
 *
 *   "5;a=1;b = "x\"y"\r\n"
 *     ^ BodyTracker enters here after the first ';' (no BWS before it: a hazard we refuse)
 *       NAME_START → NAME → VALUE_START → TOKEN → NAME_START → NAME → BWS → VALUE_START
 *       → QUOTED → QUOTED_PAIR → QUOTED → AFTER_QUOTE → CR (the size line ends)
 *
 * 1. Names are tokens; a value is a token or a quoted-string (RFC 9110 §5.6.4: qdtext and
 *    quoted-pair, obs-text allowed inside quotes only, as strict parsers such as llhttp do).
 * 2. BWS (SP / HTAB) is accepted where the grammar puts it: after ';', around '=', before the
 *    next ';'. Whitespace that ends the line, an empty name or value, an unclosed quote, a CTL or
 *    DEL, a bare LF: refused, each with its own reason. The line length is bounded by the caller.
 * 3. The machine is a state number and a 256-entry class table: no allocation per byte.
 */

/** Just after ';': BWS, then a name. */
export const EXT_NAME_START = 0;
const NAME = 1;
const AFTER_NAME = 2; // BWS after a name: '=' or ';' must follow
const VALUE_START = 3; // after '=': BWS, then a token or a quoted-string
const TOKEN = 4; // inside a token value
const QUOTED = 5;
const QUOTED_PAIR = 6; // after '\' inside a quoted-string
const AFTER_QUOTE = 7;
const BWS = 8; // BWS after a value: ';' must follow

/** Returned by extStep when the CR ending the chunk-size line is reached. */
export const EXT_CR = -1;
/** Returned by extStep on a byte the grammar does not allow; extError says why. */
export const EXT_BAD = -2;

const TCHAR = 1;
const QDTEXT = 2;
const PAIR = 4; // HTAB / SP / VCHAR / obs-text (quoted-pair, RFC 9110 §5.6.4)

const CLASS = new Uint8Array(256);
for (const ch of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  CLASS[ch.charCodeAt(0)]! |= TCHAR;
}
for (let c = 0; c < 256; c++) {
  const vchar = c >= 0x21 && c <= 0x7e;
  const obsText = c >= 0x80;
  if (c === 0x09 || c === 0x20 || vchar || obsText) CLASS[c]! |= PAIR;
  if ((c === 0x09 || c === 0x20 || vchar || obsText) && c !== 0x22 && c !== 0x5c) CLASS[c]! |= QDTEXT;
}

const isWs = (c: number) => c === 0x20 || c === 0x09;

/** The next state after byte `c` in `state`, or EXT_CR / EXT_BAD. */
export function extStep(state: number, c: number): number {
  const k = CLASS[c]!;
  switch (state) {
    case EXT_NAME_START:
      return isWs(c) ? state : k & TCHAR ? NAME : EXT_BAD;
    case NAME:
      if (k & TCHAR) return state;
      return c === 0x3d
        ? VALUE_START
        : c === 0x3b
          ? EXT_NAME_START
          : c === 0x0d
            ? EXT_CR
            : isWs(c)
              ? AFTER_NAME
              : EXT_BAD;
    case AFTER_NAME:
      return isWs(c) ? state : c === 0x3d ? VALUE_START : c === 0x3b ? EXT_NAME_START : EXT_BAD;
    case VALUE_START:
      return isWs(c) ? state : c === 0x22 ? QUOTED : k & TCHAR ? TOKEN : EXT_BAD;
    case TOKEN:
      if (k & TCHAR) return state;
      return c === 0x3b ? EXT_NAME_START : c === 0x0d ? EXT_CR : isWs(c) ? BWS : EXT_BAD;
    case QUOTED:
      return k & QDTEXT ? state : c === 0x22 ? AFTER_QUOTE : c === 0x5c ? QUOTED_PAIR : EXT_BAD;
    case QUOTED_PAIR:
      return k & PAIR ? QUOTED : EXT_BAD;
    case AFTER_QUOTE:
      return c === 0x3b ? EXT_NAME_START : c === 0x0d ? EXT_CR : isWs(c) ? BWS : EXT_BAD;
    case BWS:
      return isWs(c) ? state : c === 0x3b ? EXT_NAME_START : EXT_BAD;
    default:
      return EXT_BAD;
  }
}

/** Why byte `c` is refused in `state` (after extStep returned EXT_BAD). */
export function extError(state: number, c: number): string {
  const byte = `byte 0x${c.toString(16).padStart(2, '0')}`;
  const lineEnd = c === 0x0d || c === 0x0a;
  switch (state) {
    case EXT_NAME_START:
      return lineEnd ? 'empty chunk extension name' : `${byte} where a chunk extension name (token) was expected`;
    case NAME:
      return `${byte} in chunk extension name`;
    case AFTER_NAME:
    case BWS:
      return lineEnd ? 'whitespace at the end of a chunk extension' : `${byte} after whitespace in chunk extension`;
    case VALUE_START:
      return lineEnd
        ? 'empty chunk extension value'
        : `${byte} where a chunk extension value (token or quoted-string) was expected`;
    case TOKEN:
      return `${byte} in chunk extension value`;
    case QUOTED:
    case QUOTED_PAIR:
      return lineEnd ? 'unterminated quoted-string in chunk extension' : `${byte} in chunk extension quoted-string`;
    default:
      return `${byte} after chunk extension quoted-string`;
  }
}
