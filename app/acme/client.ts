/**
 * One `acme.Client` per `acme:` section: its account (key and URL in the section's storage,
 * registered on first use) and the trust for the directory's own HTTPS. `ca:` is that section's
 * only: acme-client sends every request of a client through `client.http.request` on one
 * shared axios instance, so the section's https agent is passed with each of this client's
 * requests, never set on the shared instance (each client has its own agent, with or without
 * `ca:`). A reload that removes `ca:` builds a new client
 * without it, and nothing trusts the old CA any more.
 */
import assert from 'node:assert';
import { Agent } from 'node:https';
import * as acme from 'acme-client';
import { SwitchboardError } from '../../src/base/errors.ts';
import { PEM_FILE, readUserText } from '../../src/base/safe-file.ts';
import type { AcmeStore } from './store.ts';

/** What a client needs from its section. */
export interface ClientSpec {
  readonly directory: string;
  readonly email?: string | undefined;
  /** Absolute path of the section's `ca:` file, if any. */
  readonly caPath: string | undefined;
}

type Request = (url: string, method: string, opts?: Record<string, unknown>) => Promise<unknown>;

/** An https agent of one client that remembers its last socket error (acme-client loses it, below). */
class ClientAgent extends Agent {
  lastError: Error | undefined;

  override createConnection(...args: Parameters<Agent['createConnection']>): ReturnType<Agent['createConnection']> {
    const socket = super.createConnection(...args);
    socket?.once('error', (e: Error) => {
      this.lastError = e;
    });
    return socket;
  }
}

/**
 * Sends every request of `client` through `agent` (acme-client has no per-client agent option).
 * When a request fails without a response (TLS refused, connection refused), acme-client's
 * retry handler ends in a TypeError after its retries; the agent's socket error is thrown
 * instead, so the log and `lastError` say what happened.
 */
function pinAgent(client: acme.Client, agent: ClientAgent): void {
  const http = (client as unknown as { http?: { request?: Request } }).http;
  const request = http?.request;
  // A release of acme-client that moves this must fail loudly, not quietly trust the system store.
  assert(
    http !== undefined && typeof request === 'function',
    'acme-client: no client.http.request to pass a ca through',
  );
  http.request = async (url, method, opts = {}) => {
    agent.lastError = undefined;
    try {
      return await request.call(http, url, method, { ...opts, httpsAgent: agent });
    } catch (e) {
      const cause = agent.lastError as Error | undefined;
      if (!(e instanceof TypeError) || cause === undefined) throw e;
      throw new SwitchboardError('SWB_ERR_ACME', `acme: ${method.toUpperCase()} ${url}: ${cause.message}`, { cause });
    }
  };
}

/** The section's client, its account registered (and stored) on first use. */
export async function createClient(spec: ClientSpec, storage: AcmeStore): Promise<acme.Client> {
  const ca = spec.caPath === undefined ? undefined : await readUserText(spec.caPath, PEM_FILE);
  const accountKey = await storage.accountKey(() => acme.crypto.createPrivateEcdsaKey());
  const accountUrl = await storage.accountUrl(spec.directory);
  const client = new acme.Client({
    directoryUrl: spec.directory,
    accountKey,
    ...(accountUrl === undefined ? {} : { accountUrl }),
    backoffAttempts: 12,
    backoffMin: 500,
    backoffMax: 10_000,
  });
  // Every client has its own agent: with `ca:` it trusts that CA (and not the system store), without it the system store.
  pinAgent(client, new ClientAgent(ca === undefined ? {} : { ca }));
  if (accountUrl === undefined) {
    await client.createAccount({
      termsOfServiceAgreed: true,
      ...(spec.email === undefined ? {} : { contact: [`mailto:${spec.email}`] }),
    });
    await storage.saveAccountUrl(spec.directory, client.getAccountUrl());
  }
  return client;
}
