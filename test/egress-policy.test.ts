import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { createEgressDispatcher, EgressDeniedError, type Resolver } from '../src/egress/dispatcher.ts';
import { createEgressPolicy, type EgressPolicyOptions, normaliseAddress } from '../src/egress/policy.ts';

function assertTable(options: EgressPolicyOptions, table: Record<string, boolean>): void {
  const policy = createEgressPolicy(options);
  for (const [address, allowed] of Object.entries(table)) {
    assert.equal(policy.check(address).allowed, allowed, `${address} should be ${allowed ? 'allowed' : 'refused'}`);
  }
}

describe('egress policy (API.md section 8)', () => {
  test('link-local and cloud-metadata addresses are always refused, mapped IPv6 forms too', () => {
    const always = {
      '169.254.169.254': false,
      '169.254.0.1': false,
      '169.254.255.255': false,
      'fe80::1': false,
      'febf::1': false,
      'fe80::1%eth0': false,
      'fd00:ec2::254': false,
      'FD00:EC2:0:0:0:0:0:254': false,
      '::ffff:169.254.169.254': false,
      '::ffff:a9fe:a9fe': false,
      '0:0:0:0:0:ffff:a9fe:a9fe': false,
      '[::ffff:169.254.169.254]': false,
      '169.253.255.255': true,
      '169.255.0.0': true,
      'fec0::1': true,
    };
    assertTable({ allowPrivate: true }, always);
    assertTable({ allowPrivate: false, allow: ['169.254.169.254', 'fe80::/10', '::ffff:169.254.169.254'] }, always);
  });

  test('private, loopback, CGNAT and unspecified ranges are allowed by default', () => {
    assertTable(
      { allowPrivate: true },
      {
        '10.0.0.1': true,
        '172.16.0.1': true,
        '192.168.1.1': true,
        '127.0.0.1': true,
        '100.64.0.1': true,
        '::1': true,
        'fd12:3456::1': true,
        '93.184.216.34': true,
      },
    );
  });

  test('private ranges are refused with allowPrivate=false, edges included; public addresses stay allowed', () => {
    assertTable(
      { allowPrivate: false },
      {
        '10.0.0.0': false,
        '10.255.255.255': false,
        '9.255.255.255': true,
        '11.0.0.0': true,
        '172.16.0.0': false,
        '172.31.255.255': false,
        '172.15.255.255': true,
        '172.32.0.0': true,
        '192.168.0.1': false,
        '192.168.255.255': false,
        '192.169.0.1': true,
        '127.0.0.1': false,
        '127.255.255.254': false,
        '100.64.0.0': false,
        '100.127.255.255': false,
        '100.63.255.255': true,
        '100.128.0.0': true,
        '0.0.0.0': false,
        '0.255.255.255': false,
        '::1': false,
        '::': false,
        '0:0:0:0:0:0:0:1': false,
        'fc00::1': false,
        'fdff:ffff::1': false,
        'fe00::1': true,
        '::ffff:10.1.2.3': false,
        '::ffff:127.0.0.1': false,
        '::ffff:7f00:1': false,
        '::ffff:c0a8:101': false,
        '::ffff:93.184.216.34': true,
        '93.184.216.34': true,
        '2606:4700::1111': true,
      },
    );
  });

  test('IX_EGRESS_DENY refuses, and beats IX_EGRESS_ALLOW and allowPrivate', () => {
    assertTable(
      { allowPrivate: true, deny: ['10.0.0.0/8', '203.0.113.0/24'], allow: ['203.0.113.5'] },
      {
        '10.1.1.1': false,
        '203.0.113.5': false,
        '203.0.113.200': false,
        '::ffff:203.0.113.9': false,
        '203.0.114.1': true,
        '192.168.1.1': true,
      },
    );
  });

  test('IX_EGRESS_ALLOW is an exception to the private rule, not an exclusive list', () => {
    assertTable(
      { allowPrivate: false, allow: ['10.1.0.0/16', '127.0.0.1', 'fd00:1234::/32'] },
      {
        '10.1.2.3': true,
        '::ffff:10.1.2.3': true,
        '10.2.0.1': false,
        '127.0.0.1': true,
        '127.0.0.2': false,
        'fd00:1234::9': true,
        'fd00:1235::9': false,
        '198.51.100.1': true,
      },
    );
  });

  test('a bare address is /32 or /128', () => {
    assertTable(
      { allowPrivate: true, deny: ['198.51.100.7', '2001:db8::1'] },
      {
        '198.51.100.7': false,
        '198.51.100.8': true,
        '198.51.100.6': true,
        '2001:db8::1': false,
        '2001:db8:0:0:0:0:0:1': false,
        '2001:db8::2': true,
      },
    );
    assertTable({ allowPrivate: false, allow: ['::1'] }, { '::1': true, '::2': true, '127.0.0.1': false });
  });

  test('each refusal says why; a host name is not an address', () => {
    const policy = createEgressPolicy({ allowPrivate: false, deny: ['198.51.100.0/24'] });
    const reason = (address: string) => {
      const decision = policy.check(address);
      assert.equal(decision.allowed, false);
      return decision.allowed ? '' : decision.reason;
    };
    assert.match(reason('169.254.169.254'), /always refused/);
    assert.match(reason('198.51.100.1'), /IX_EGRESS_DENY/);
    assert.match(reason('10.0.0.1'), /IX_EGRESS_ALLOW_PRIVATE=false/);
    assert.match(reason('example.com'), /not an IP address/);
  });

  test('IPv4-mapped IPv6 addresses are normalised to IPv4', () => {
    assert.equal(normaliseAddress('::ffff:169.254.169.254'), '169.254.169.254');
    assert.equal(normaliseAddress('::FFFF:a9fe:A9FE'), '169.254.169.254');
    assert.equal(normaliseAddress('[::ffff:127.0.0.1]'), '127.0.0.1');
    assert.equal(normaliseAddress('2001:DB8:0::1'), '2001:db8::1');
    assert.equal(normaliseAddress('10.0.0.1'), '10.0.0.1');
  });

  test('an invalid CIDR is refused when the policy is built', () => {
    assert.throws(() => createEgressPolicy({ allowPrivate: true, deny: ['10.0.0.0/33'] }), TypeError);
    assert.throws(() => createEgressPolicy({ allowPrivate: true, allow: ['example.com'] }), TypeError);
    assert.throws(() => createEgressPolicy({ allowPrivate: true, allow: ['10.0.0.0/8/1'] }), TypeError);
  });
});

describe('egress dispatcher: every connection is checked at connect time', () => {
  let server: Server;
  let port: number;
  let served = 0;

  before(async () => {
    // Connection: close makes every request open a new connection, so every request is checked.
    server = createServer((_req, res) => {
      served++;
      res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' }).end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function get(dispatcher: ReturnType<typeof createEgressDispatcher>, url: string): Promise<string> {
    const res = await request(url, { dispatcher });
    return res.body.text();
  }

  async function refusal(promise: Promise<unknown>): Promise<EgressDeniedError> {
    const err = await promise.then(
      () => assert.fail('the request went through'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof EgressDeniedError, `expected EgressDeniedError, got ${err}`);
    return err;
  }

  /** Records every client socket Node opens while `run` runs. */
  async function socketsOpenedDuring(run: () => Promise<unknown>): Promise<number> {
    let opened = 0;
    const onSocket = () => opened++;
    subscribe('net.client.socket', onSocket);
    try {
      await run();
    } finally {
      unsubscribe('net.client.socket', onSocket);
    }
    return opened;
  }

  test('refuses 127.0.0.1 with allowPrivate=false, as an IP literal and as localhost', async () => {
    const dispatcher = createEgressDispatcher(createEgressPolicy({ allowPrivate: false }));
    try {
      const before = served;
      const literal = await refusal(get(dispatcher, `http://127.0.0.1:${port}/`));
      assert.equal(literal.host, '127.0.0.1');
      assert.equal(literal.address, '127.0.0.1');
      const named = await refusal(get(dispatcher, `http://localhost:${port}/`));
      assert.equal(named.host, 'localhost');
      assert.ok(['127.0.0.1', '::1'].includes(named.address), named.address);
      const bracketed = await refusal(get(dispatcher, `http://[::1]:${port}/`));
      assert.equal(bracketed.address, '::1');
      assert.equal(served, before, 'no request reached the server');
    } finally {
      await dispatcher.close();
    }
  });

  test('admits 127.0.0.1 when IX_EGRESS_ALLOW names it', async () => {
    const dispatcher = createEgressDispatcher(createEgressPolicy({ allowPrivate: false, allow: ['127.0.0.1', '::1'] }));
    try {
      assert.equal(await get(dispatcher, `http://127.0.0.1:${port}/`), 'ok');
      assert.equal(await get(dispatcher, `http://localhost:${port}/`), 'ok');
    } finally {
      await dispatcher.close();
    }
  });

  test('refuses 169.254.169.254 and fd00:ec2::254 before any socket is opened, whatever the configuration', async () => {
    const dispatcher = createEgressDispatcher(createEgressPolicy({ allowPrivate: true, allow: ['169.254.169.254'] }));
    try {
      const opened = await socketsOpenedDuring(async () => {
        const metadata = await refusal(get(dispatcher, 'http://169.254.169.254/latest/meta-data/'));
        assert.equal(metadata.address, '169.254.169.254');
        await refusal(get(dispatcher, 'http://[::ffff:169.254.169.254]/'));
        await refusal(get(dispatcher, 'http://[fd00:ec2::254]/'));
        await refusal(get(dispatcher, 'https://169.254.169.254/'));
      });
      assert.equal(opened, 0);
    } finally {
      await dispatcher.close();
    }
  });

  test('DNS rebinding: a host that re-resolves to a refused address is refused at its next connection', async () => {
    let lookups = 0;
    const rebinding: Resolver = async () => {
      lookups++;
      return [{ address: lookups === 1 ? '127.0.0.1' : '169.254.169.254', family: 4 }];
    };
    const dispatcher = createEgressDispatcher(createEgressPolicy({ allowPrivate: true }), { resolve: rebinding });
    try {
      assert.equal(await get(dispatcher, `http://rebind.test:${port}/`), 'ok');
      const err = await refusal(get(dispatcher, `http://rebind.test:${port}/`));
      assert.equal(err.host, 'rebind.test');
      assert.equal(err.address, '169.254.169.254');
      assert.equal(lookups, 2);
    } finally {
      await dispatcher.close();
    }
  });

  test('a host name with any refused address among its answers is refused', async () => {
    const mixed: Resolver = async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '169.254.169.254', family: 4 },
    ];
    const dispatcher = createEgressDispatcher(createEgressPolicy({ allowPrivate: true }), { resolve: mixed });
    try {
      const err = await refusal(get(dispatcher, `http://mixed.test:${port}/`));
      assert.equal(err.address, '169.254.169.254');
    } finally {
      await dispatcher.close();
    }
  });
});
