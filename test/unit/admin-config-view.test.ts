/**
 * `GET /config` redaction (app/admin/config-view.ts, issue 19): secrets found by schema (a field
 * marked `.meta({ secret: true })`, whatever its name), by value (URL passwords, DSN credential
 * parameters, PEM material) and, only where no schema knows the field, by name — and nothing
 * else hidden.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configView, REDACTED, redact, redactString } from '../../app/admin/config-view.ts';
import { validateConfig } from '../../app/load-config.ts';
import { configSchema } from '../../src/config/schema.ts';
import { tempDir } from '../harness/router.ts';

const base = {
  listeners: [{ name: 'web', address: '127.0.0.1:0' }],
  addressBook: { name: 'file', path: 'servers.yaml' },
};

describe('redact', () => {
  it('hides admin.token by the schema, and keeps an empty one empty', () => {
    const set = configSchema.parse({ ...base, admin: { token: 'hunter2' } });
    expect((redact(set, configSchema) as typeof set).admin).toMatchObject({
      token: REDACTED,
      open: ['/healthz', '/readyz'],
    });
    const unset = configSchema.parse({ ...base, admin: {} });
    expect((redact(unset, configSchema) as typeof unset).admin?.token).toBe('');
  });

  it('follows a plugin schema: a field marked secret is hidden whatever its name; known fields are not guessed', () => {
    const schema = z.strictObject({
      dsnPart: z.string().meta({ secret: true }),
      auth: z.enum(['none', 'basic']).default('none'),
      key: z.string(),
      nested: z.strictObject({ opaque: z.string().meta({ secret: true }).optional() }).optional(),
      list: z.array(z.strictObject({ credentialsFile: z.string(), pin: z.string().meta({ secret: true }) })),
    });
    const value = schema.parse({
      dsnPart: 'abc',
      auth: 'basic',
      key: 'X-User',
      nested: { opaque: 'zzz' },
      list: [{ credentialsFile: '/etc/creds', pin: '1234' }],
    });
    expect(redact(value, schema)).toEqual({
      dsnPart: REDACTED,
      auth: 'basic',
      key: 'X-User',
      nested: { opaque: REDACTED },
      list: [{ credentialsFile: '/etc/creds', pin: REDACTED }],
    });
  });

  it('hides URL passwords, DSN credential parameters and PEM material anywhere, keeping hosts and paths', () => {
    expect(redactString('http://root:pw@127.0.0.1:2379')).toBe(`http://root:${REDACTED}@127.0.0.1:2379`);
    expect(redactString('postgres://app:s3cr%40t@db.internal:5432/routes')).toBe(
      `postgres://app:${REDACTED}@db.internal:5432/routes`,
    );
    expect(redactString('postgres://db.internal/app?user=x&password=y&sslmode=require')).toBe(
      `postgres://db.internal/app?user=x&password=${REDACTED}&sslmode=require`,
    );
    expect(redactString("host=db.internal user=app password='p w' dbname=routes")).toBe(
      `host=db.internal user=app password=${REDACTED} dbname=routes`,
    );
    expect(redactString('host=db sslpassword = x')).toBe(`host=db sslpassword = ${REDACTED}`);
    expect(redactString('https://user@example.test/x')).toBe('https://user@example.test/x');
    expect(redactString('-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB...\n-----END ENCRYPTED PRIVATE KEY-----')).toBe(
      REDACTED,
    );
    expect(redactString('certs/www.key')).toBe('certs/www.key');
  });

  it('guesses by name only where no schema knows the field (loose plugin options)', () => {
    const loose = z.looseObject({ name: z.string() });
    expect(
      redact(
        { name: './my-book.ts', password: 'p', nested: { apiKey: 'k', host: 'h' }, passphrase: '', timeout: 5 },
        loose,
      ),
    ).toEqual({
      name: './my-book.ts',
      password: REDACTED,
      nested: { apiKey: REDACTED, host: 'h' },
      passphrase: '',
      timeout: 5,
    });
    expect(redact({ token: 't', dsn: 'mysql://u:p@h/db' }, undefined)).toEqual({
      token: REDACTED,
      dsn: `mysql://u:${REDACTED}@h/db`,
    });
  });
});

describe('configView', () => {
  it('is the effective config: defaults applied, plugin options parsed, secrets redacted', async () => {
    const dir = await tempDir();
    const raw = {
      listeners: [{ name: 'web', address: '127.0.0.1:0' }],
      addressBook: { name: 'etcd', endpoints: ['http://root:etcdpw@127.0.0.1:2379'] },
      admin: { token: 'hunter2' },
    };
    const file = join(dir, 'switchboard.yaml');
    await writeFile(file, JSON.stringify(raw));
    const view = configView(await validateConfig(raw, file, JSON.stringify(raw))) as {
      file: string;
      config: Record<string, Record<string, unknown>>;
    };
    const text = JSON.stringify(view);
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('etcdpw');
    expect(view.file).toBe(file);
    expect(view.config.admin).toMatchObject({ token: REDACTED, address: { host: '127.0.0.1', port: 9901 } });
    expect(view.config.addressBook).toMatchObject({
      name: 'etcd',
      endpoints: [`http://root:${REDACTED}@127.0.0.1:2379`],
      prefix: '/switchboard/',
    });
    expect(view.config.operator).toEqual({ name: 'bfe' });
    expect(view.config.panel).toMatchObject({ name: 'net' });
    expect(view.config.limits).toMatchObject({ maxConnections: 4096 });
  });
});
