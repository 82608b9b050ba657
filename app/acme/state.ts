/**
 * The ACME manager's state (types only): a listener's `acme:` section, one name's state and
 * what `GET /certificates` shows of it.
 */
import type * as acme from 'acme-client';
import type { Priority } from './select.ts';
import type { AcmeStore } from './store.ts';

/** A listener's parsed `acme:` section. */
export interface AcmeSection {
  readonly directory: string;
  readonly email?: string | undefined;
  readonly names?: readonly string[] | undefined;
  readonly domains?: readonly string[] | undefined;
  readonly maxNames: number;
  readonly maxOrdersPerHour: number;
  readonly challenge: 'tls-alpn-01' | 'http-01';
  readonly storage: string;
  readonly renewBefore: number;
  readonly ca?: string | undefined;
}

/** One name's state, as `GET /certificates` shows it. */
export interface AcmeNameStatus {
  readonly listener: string;
  readonly name: string;
  readonly state: 'valid' | 'ordering' | 'failed' | 'waiting';
  readonly notAfter: string | undefined;
  readonly renewAt: string | undefined;
  readonly failures: number;
  readonly lastError: string | undefined;
  /** False while the served certificate is held in memory only (its save is retried). */
  readonly stored: boolean;
}

/** One listener's `acme:` section as the manager keeps it. */
export interface Section {
  readonly key: string;
  readonly listener: string;
  readonly spec: AcmeSection;
  readonly storage: AcmeStore;
  /** The account (directory + storage): one order budget across sections that share it. */
  readonly account: string;
  readonly caPath: string | undefined;
  client: Promise<acme.Client> | undefined;
  /** The names last skipped, as logged (a line only when it changes). */
  skipped: string;
}

/** One (listener, name) the manager keeps a certificate for. */
export interface NameState {
  readonly section: Section;
  readonly name: string;
  readonly priority: Priority;
  notAfter: number | undefined;
  lastIssued: number | undefined;
  renewAt: number | undefined;
  timer: NodeJS.Timeout | undefined;
  ordering: boolean;
  failures: number;
  lastError: string | undefined;
  removed: boolean;
  /** A certificate was handed to the sink for this name (so dropping the name withdraws it). */
  published: boolean;
}
