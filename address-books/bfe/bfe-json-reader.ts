/**
 * Reading BFE's JSON the way BFE does (reference bfe.md §3 "Common facts"): object keys match
 * their field case-insensitively, unknown keys are ignored (and reported here as warnings),
 * required fields must be present and non-null. Problems are collected, not thrown one by one.
 */
import { Issues } from './issues.ts';

/** A JSON object's known fields, keyed by their canonical BFE names. */
export type Fields = Record<string, unknown>;

/** Reads the fields of one BFE data file, collecting errors and warnings. */
export class BfeReader {
  readonly file: string;
  readonly issues = new Issues();
  readonly #warnings: string[];

  constructor(file: string, warnings: string[]) {
    this.file = file;
    this.#warnings = warnings;
  }

  /** Records a warning about `where` in this file. */
  warn(where: string, message: string): void {
    this.#warnings.push(`${this.file}: ${where === '' ? '' : `${where}: `}${message}`);
  }

  /** Records an error about `where` in this file. */
  error(where: string, message: string): void {
    this.issues.add(where, message);
  }

  /** True for a non-null, non-array object. */
  isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  /** The known fields of an object (case-insensitive keys); unknown keys become warnings. */
  fields(value: unknown, where: string, known: readonly string[]): Fields | undefined {
    if (!this.isObject(value)) {
      this.error(where, `expected an object, got ${describe(value)}`);
      return undefined;
    }
    const out: Fields = {};
    for (const [key, v] of Object.entries(value)) {
      const name = known.find((k) => k === key) ?? known.find((k) => k.toLowerCase() === key.toLowerCase());
      if (name === undefined) this.warn(join(where, key), 'unknown key ignored');
      else out[name] = v;
    }
    return out;
  }

  /** A map (JSON object with data keys); null or absent is undefined, with an error if required. */
  map(value: unknown, where: string, required: boolean): Record<string, unknown> | undefined {
    if (value === undefined || value === null) {
      if (required) this.error(where, 'is required');
      return undefined;
    }
    if (!this.isObject(value)) {
      this.error(where, `expected an object, got ${describe(value)}`);
      return undefined;
    }
    return value;
  }

  /** A string field. */
  string(value: unknown, where: string, required: boolean): string | undefined {
    if (value === undefined || value === null) {
      if (required) this.error(where, 'is required');
      return undefined;
    }
    if (typeof value !== 'string') this.error(where, `expected a string, got ${describe(value)}`);
    return typeof value === 'string' ? value : undefined;
  }

  /** An integer field. */
  int(value: unknown, where: string, required: boolean): number | undefined {
    if (value === undefined || value === null) {
      if (required) this.error(where, 'is required');
      return undefined;
    }
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      this.error(where, `expected an integer, got ${describe(value)}`);
      return undefined;
    }
    return value;
  }

  /** A boolean field. */
  bool(value: unknown, where: string): boolean | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') this.error(where, `expected true or false, got ${describe(value)}`);
    return typeof value === 'boolean' ? value : undefined;
  }

  /** A list of strings. */
  strings(value: unknown, where: string, required: boolean): string[] | undefined {
    const list = this.list(value, where, required);
    if (list === undefined) return undefined;
    const out: string[] = [];
    list.forEach((v, i) => {
      const s = this.string(v, `${where}[${i}]`, true);
      if (s !== undefined) out.push(s);
    });
    return out;
  }

  /** A list. */
  list(value: unknown, where: string, required: boolean): unknown[] | undefined {
    if (value === undefined || value === null) {
      if (required) this.error(where, 'is required');
      return undefined;
    }
    if (!Array.isArray(value)) this.error(where, `expected a list, got ${describe(value)}`);
    return Array.isArray(value) ? value : undefined;
  }
}

/** `a.b` (or `b` at the top). */
export function join(where: string, key: string): string {
  return where === '' ? key : `${where}.${key}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'string' ? JSON.stringify(value) : typeof value;
}
