/**
 * `GET /config` redaction (app/admin/config-view.ts, issue 19): secrets found by schema (a field
 * marked `.meta({ writeOnly: true })`, whatever its name), by value (URL passwords, DSN credential
 * parameters, PEM material) and, only where no schema knows the field, by name — and nothing
 * else hidden.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configView, REDACTED, redact, redactString } from '../../app/admin/config-view.ts';
import { validateConfig } from '../../app/load-config.ts';
import { notSecret } from '../../src/config/not-secret.ts';
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

  it('follows a plugin schema: a field marked secret is hidden whatever its name; values a schema fixes stay', () => {
    const schema = z.strictObject({
      dsnPart: z.string().meta({ writeOnly: true }),
      auth: z.enum(['none', 'basic']).default('none'),
      header: z.string(),
      nested: z.strictObject({ opaque: z.string().meta({ writeOnly: true }).optional() }).optional(),
      list: z.array(z.strictObject({ file: z.string(), pin: z.string().meta({ writeOnly: true }) })),
      keyFile: notSecret(z.string()),
      tokenTtl: z.boolean(),
    });
    const value = schema.parse({
      dsnPart: 'abc',
      auth: 'basic',
      header: 'X-User',
      nested: { opaque: 'zzz' },
      list: [{ file: '/etc/creds', pin: '1234' }],
      keyFile: 'certs/www.key',
      tokenTtl: true,
    });
    expect(redact(value, schema)).toEqual({
      dsnPart: REDACTED,
      auth: 'basic',
      header: 'X-User',
      nested: { opaque: REDACTED },
      list: [{ file: '/etc/creds', pin: REDACTED }],
      keyFile: 'certs/www.key',
      tokenTtl: true,
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

  it('guesses by name in loose plugin options too, and hides every leaf under a secret name', () => {
    const loose = z.looseObject({ name: z.string() });
    expect(
      redact(
        {
          name: './my-book.ts',
          password: 'p',
          nested: { apiKey: 'k', host: 'h' },
          passphrase: '',
          timeout: 5,
          credentials: { user: 'u', value: 'v', port: 5432 },
          tokens: ['a', 'b'],
        },
        loose,
      ),
    ).toEqual({
      name: './my-book.ts',
      password: REDACTED,
      nested: { apiKey: REDACTED, host: 'h' },
      passphrase: '',
      timeout: 5,
      credentials: { user: REDACTED, value: REDACTED, port: REDACTED },
      tokens: [REDACTED, REDACTED],
    });
    expect(redact({ token: 't', dsn: 'mysql://u:p@h/db' }, undefined)).toEqual({
      token: REDACTED,
      dsn: `mysql://u:${REDACTED}@h/db`,
    });
  });

  it('a record key names data, not a field: a cluster called auth keeps its backends shown', () => {
    const schema = z.record(z.string(), z.strictObject({ backends: z.array(z.string()), weight: z.number() }));
    expect(redact({ auth: { backends: ['10.0.0.1:80'], weight: 3 } }, schema)).toEqual({
      auth: { backends: ['10.0.0.1:80'], weight: 3 },
    });
    const headers = z.record(z.string(), z.string());
    expect(redact({ 'X-Api-Key': 'k', Accept: 'a' }, headers)).toEqual({ 'X-Api-Key': REDACTED, Accept: 'a' });
  });

  // Issue 39 item 6: an independent review planted these and got every one back.
  it('hides every planted secret, whatever its spelling or place', () => {
    const planted = ['PLANT-db-pw', 'PLANT-api', 'PLANT-bearer', 'PLANT-url@pw', 'PLANT-access', 'PLANT-k', 'PLANT-s'];
    const pluginSchema = z.strictObject({
      dbPassword: z.string(),
      apiToken: z.string(),
      headers: z.record(z.string(), z.string()),
      upstream: z.string(),
      options: z.looseObject({}),
      healthPath: z.string(),
    });
    const value = pluginSchema.parse({
      dbPassword: 'PLANT-db-pw',
      apiToken: 'PLANT-api',
      headers: { Authorization: 'Bearer PLANT-bearer', 'X-Forward': 'basic PLANT-basic' },
      upstream: 'https://svc:PLANT-url@pw@backend.internal:8443/x',
      options: { accessToken: 'PLANT-access', clientSecretValue: 'PLANT-secret', privateKeyPem: 'x' },
      healthPath: '/healthz?key=PLANT-k&sig=PLANT-s&ok=1',
    });
    const text = JSON.stringify(redact(value, pluginSchema));
    for (const p of [...planted, 'PLANT-basic', 'PLANT-secret', 'pw@backend']) expect(text).not.toContain(p);
    expect(text).toContain('backend.internal:8443/x');
    expect(text).toContain('ok=1');
  });

  it.each([
    // [input, output]: the WHATWG parser ends the userinfo at the authority's last `@`.
    ['http://u:p@ss@h:1/db', `http://u:${REDACTED}@h:1/db`],
    ['postgres://u:a@b@c@db/x?sslmode=require', `postgres://u:${REDACTED}@db/x?sslmode=require`],
    ['http://h/path@x', 'http://h/path@x'],
    ['https://:only@h/', `https://:${REDACTED}@h/`],
    ['Authorization: Bearer abc.def', `Authorization: Bearer ${REDACTED}`],
    ['Basic dXNlcjpwdw==', `Basic ${REDACTED}`],
    ['/check?api_key=1&x=2', `/check?api_key=${REDACTED}&x=2`],
    ['/check?X-Amz-Signature=ff&X-Amz-Credential=a', `/check?X-Amz-Signature=${REDACTED}&X-Amz-Credential=${REDACTED}`],
  ])('redactString(%j)', (input, output) => {
    expect(redactString(input)).toBe(output);
  });
});

describe('configView', () => {
  it('is the effective config: defaults applied, plugin options parsed, secrets redacted', async () => {
    const dir = await tempDir();
    const raw = {
      listeners: [
        { name: 'web', address: '127.0.0.1:0' },
        {
          name: 'tls',
          address: '127.0.0.1:0',
          tls: 'terminate',
          certificates: [{ cert: 'certs/www.pem', key: 'certs/www.key' }],
          clientAuth: { ca: 'certs/ca.pem' },
        },
      ],
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
    // File paths stay, though `key` and `clientAuth` are names the name rule would hide.
    expect(view.config.listeners).toMatchObject([
      {},
      { certificates: [{ cert: 'certs/www.pem', key: 'certs/www.key' }], clientAuth: { ca: 'certs/ca.pem' } },
    ]);
    expect(view.config.operator).toEqual({ name: 'bfe' });
    expect(view.config.panel).toMatchObject({ name: 'net' });
    expect(view.config.limits).toMatchObject({ maxConnections: 4096 });
  });

  it('built-in plugins: names that hold no secret stay (a hash key, an enum), a token in a check path goes', async () => {
    const raw = {
      listeners: [{ name: 'web', address: '127.0.0.1:0' }],
      addressBook: {
        name: 'bfe',
        products: { 'api-keys': { hosts: ['keys.test'], rules: [{ cond: 'default_t()', cluster: 'auth-svc' }] } },
        clusters: {
          'auth-svc': {
            hash: { strategy: 'header', key: 'X-User' },
            healthCheck: { path: '/h?token=PLANT-t' },
            subclusters: { s: { weight: 1, backends: [{ address: '127.0.0.1:9' }] } },
          },
        },
      },
      operator: { name: 'consistent-hash', key: 'header', header: 'X-Session' },
    };
    const view = configView(await validateConfig(raw, '/tmp/switchboard.yaml', JSON.stringify(raw))) as {
      config: Record<string, Record<string, unknown>>;
    };
    const text = JSON.stringify(view);
    expect(text).not.toContain('PLANT-t');
    expect(view.config.operator).toMatchObject({ name: 'consistent-hash', key: 'header', header: 'X-Session' });
    const clusters = view.config.addressBook!.clusters as Record<string, Record<string, unknown>>;
    const cluster = clusters['auth-svc'];
    expect(cluster).toMatchObject({ hash: { strategy: 'header', key: 'X-User' } });
    expect(text).toContain('127.0.0.1');
    expect(text).toContain('keys.test');
  });
});
