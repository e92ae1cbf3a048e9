import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { createEgressDispatcher, EgressDeniedError, type Resolver } from '../../src/egress/dispatcher.ts';
import { createEgressPolicy, type EgressPolicyOptions, normaliseAddress } from '../../src/egress/policy.ts';

function assertTable(options: EgressPolicyOptions, table: Record<string, boolean>): void {
  const policy = createEgressPolicy(options);
  for (const [address, allowed] of Object.entries(table)) {
    assert.equal(policy.check(address).allowed, allowed, `${address} should be ${allowed ? 'allowed' : 'refused'}`);
  }
}

describe('egress policy (docs/security.md#egress-policy)', () => {
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
      'fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff': true,
    };
    assertTable({ allowPrivate: true }, { ...always, 'fec0::1': true });
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

  test('multicast, broadcast, reserved and discard-only ranges are always refused', () => {
    const never = {
      '224.0.0.1': false,
      '239.255.255.250': false,
      '240.0.0.1': false,
      '255.255.255.255': false,
      '::ffff:255.255.255.255': false,
      'ff02::1': false,
      'ff0e::101': false,
      '100::': false,
      '100::ffff:ffff:ffff:ffff': false,
      '64:ff9b::e000:1': false,
      '223.255.255.255': true,
      'fe7f::1': true,
      '100:0:0:1::': true,
    };
    assertTable({ allowPrivate: true }, never);
    assertTable({ allowPrivate: false, allow: ['224.0.0.0/4', 'ff00::/8', '255.255.255.255'] }, never);
  });

  test('benchmarking and documentation ranges and SIIT forms of private addresses are refused with allowPrivate=false', () => {
    const table = {
      '198.18.0.1': false,
      '198.19.255.255': false,
      '198.17.255.255': true,
      '198.20.0.0': true,
      '192.0.2.1': false,
      '198.51.100.1': false,
      '203.0.113.1': false,
      '2001:db8::1': false,
      '2001:db8:ffff::1': false,
      '2001:db9::1': true,
      // SIIT's IPv4-translated form ::ffff:0:a.b.c.d (RFC 2765) carries the IPv4 address in its last 32 bits.
      '::ffff:0:7f00:1': false,
      '::ffff:0:127.0.0.1': false,
      '::ffff:0:a00:1': false,
      '::ffff:0:5db8:d822': true,
    };
    assertTable({ allowPrivate: false }, table);
    assertTable({ allowPrivate: true }, Object.fromEntries(Object.keys(table).map((address) => [address, true])));
    assertTable({ allowPrivate: false, allow: ['198.18.0.0/15'] }, { '198.18.4.4': true, '198.51.100.1': false });
    assertTable({ allowPrivate: true }, { '::ffff:0:a9fe:a9fe': false });
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
        '93.184.216.34': true,
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
    // `::2` is IPv4-compatible 0.0.0.2, in 0.0.0.0/8: private, and not named by the `::1` entry.
    assertTable({ allowPrivate: false, allow: ['::1'] }, { '::1': true, '::2': false, '127.0.0.1': false });
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

  test('each refusal of an address that embeds an IPv4 address names that IPv4 address', () => {
    const policy = createEgressPolicy({ allowPrivate: false, deny: ['198.51.100.0/24'] });
    const reason = (address: string) => {
      const decision = policy.check(address);
      assert.equal(decision.allowed, false, address);
      return decision.allowed ? '' : decision.reason;
    };
    assert.match(reason('64:ff9b::a9fe:a9fe'), /always refused.*169\.254\.169\.254/);
    assert.match(reason('2002:c633:6401::1'), /IX_EGRESS_DENY.*198\.51\.100\.1/);
    assert.match(reason('::a00:1'), /IX_EGRESS_ALLOW_PRIVATE=false.*10\.0\.0\.1/);
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

describe('egress policy: an IPv6 address that embeds an IPv4 address is judged as that IPv4 address as well', () => {
  // Teredo (2001::/32) carries its server's IPv4 address in bits 32..63 and its client's, XOR 0xffffffff,
  // in the last 32 bits: 169.254.169.254 → 5601:5601, 127.0.0.1 → 80ff:fffe, 10.0.0.1 → f5ff:fffe,
  // 10.1.2.3 → f5fe:fdfc, 192.168.1.1 → 3f57:fefe, 93.184.216.34 → a247:27dd.

  test('169.254.0.0/16 is always refused in every embedding, whatever IX_EGRESS_ALLOW names', () => {
    const metadata = {
      '::a9fe:a9fe': false,
      '::169.254.169.254': false,
      '0:0:0:0:0:0:a9fe:a9fe': false,
      '64:ff9b::a9fe:a9fe': false,
      '64:ff9b::169.254.169.254': false,
      '[64:FF9B::A9FE:A9FE]': false,
      '64:ff9b::a9fe:1': false,
      '64:ff9b:1::a9fe:a9fe': false,
      '64:ff9b:1:ffff:ffff:ffff:a9fe:a9fe': false,
      '2002:a9fe:a9fe::1': false,
      '2002:a9fe:a9fe:ffff:ffff:ffff:ffff:ffff': false,
      '2001:0:5db8:d822::5601:5601': false,
      '2001:0:a9fe:a9fe::a247:27dd': false,
      // Outside the embedding prefixes: plain IPv6 addresses.
      '64:ff9c::a9fe:a9fe': true,
      '64:ff9b:2::a9fe:a9fe': true,
      '2003:a9fe:a9fe::1': true,
      '2001:db8::a9fe:a9fe': true,
      '::1:a9fe:a9fe': true,
    };
    assertTable({ allowPrivate: true }, metadata);
    assertTable(
      {
        allowPrivate: false,
        allow: ['169.254.0.0/16', '::/96', '64:ff9b::/96', '64:ff9b:1::/48', '2002::/16', '2001::/32', '::/0', '0.0.0.0/0'],
      },
      metadata,
    );
  });

  test('loopback, private and CGNAT addresses are refused in every embedding with allowPrivate=false', () => {
    const table = {
      '::7f00:1': false,
      '::127.0.0.1': false,
      '64:ff9b::7f00:1': false,
      '64:ff9b:1::7f00:1': false,
      '2002:7f00:1::': false,
      '2001:0:5db8:d822::80ff:fffe': false,
      '2001:0:7f00:1::a247:27dd': false,
      '::a00:1': false,
      '64:ff9b::a00:1': false,
      '64:ff9b::10.10.10.10': false,
      '64:ff9b:1::a0a:a0a': false,
      '2002:a00:1::1': false,
      '2001:0:5db8:d822::f5ff:fffe': false,
      '64:ff9b::c0a8:101': false,
      '2002:ac10:1::': false,
      '64:ff9b::6440:1': false,
      '64:ff9b::': false,
      // 93.184.216.34 is public in every embedding.
      '::5db8:d822': true,
      '64:ff9b::5db8:d822': true,
      '64:ff9b::93.184.216.34': true,
      '64:ff9b:1::5db8:d822': true,
      '2002:5db8:d822::1': true,
      '2001:0:5db8:d822::a247:27dd': true,
    };
    assertTable({ allowPrivate: false }, table);
    assertTable({ allowPrivate: true }, Object.fromEntries(Object.keys(table).map((address) => [address, true])));
  });

  test('IX_EGRESS_DENY=127.0.0.1/32 covers 0.0.0.0/8, ::, ::1 and their embedded forms', () => {
    const loopback = {
      '127.0.0.1': false,
      '0.0.0.0': false,
      '0.1.2.3': false,
      '0.255.255.255': false,
      '::': false,
      '::1': false,
      '::2': false,
      '::ffff:0.0.0.0': false,
      '::ffff:127.0.0.1': false,
      '::127.0.0.1': false,
      '64:ff9b::7f00:1': false,
      '64:ff9b::': false,
      '64:ff9b:1::7f00:1': false,
      '2002:7f00:1::': false,
      '2002::': false,
      '2001:0:5db8:d822::80ff:fffe': false,
      '127.0.0.2': true,
      '1.0.0.0': true,
      '::ffff:127.0.0.2': true,
      '64:ff9b::7f00:2': true,
      '::1:0:0': true,
      '93.184.216.34': true,
    };
    assertTable({ allowPrivate: true, deny: ['127.0.0.1/32'] }, loopback);
    assertTable({ allowPrivate: true, deny: ['127.0.0.1'] }, loopback);
    assertTable({ allowPrivate: true, deny: ['::ffff:127.0.0.1'] }, loopback);
    assertTable(
      { allowPrivate: true, deny: ['127.0.0.0/8'] },
      { '0.0.0.0': false, '::': false, '::1': false, '64:ff9b::7f00:2': false, '127.0.0.2': false, '1.0.0.0': true },
    );
  });

  test('IX_EGRESS_DENY of an IPv4 range refuses it in every embedding', () => {
    assertTable(
      { allowPrivate: true, deny: ['10.0.0.0/8', '93.184.216.34'] },
      {
        '::a00:1': false,
        '::ffff:a00:1': false,
        '64:ff9b::a00:1': false,
        '64:ff9b:1::a00:1': false,
        '2002:a00:1::1': false,
        '2001:0:5db8:d822::f5ff:fffe': false,
        '2001:0:a00:1::': false,
        '64:ff9b::5db8:d822': false,
        '2002:5db8:d822::1': false,
        '64:ff9b::b00:1': true,
        '64:ff9b::5db8:d823': true,
      },
    );
  });

  test('IX_EGRESS_ALLOW admits an embedded private address, and no loopback equivalent of it', () => {
    assertTable(
      { allowPrivate: false, allow: ['10.1.0.0/16', '127.0.0.1'] },
      {
        '::a01:203': true,
        '64:ff9b::a01:203': true,
        '64:ff9b:1::a01:203': true,
        '2002:a01:203::1': true,
        '2001:0:5db8:d822::f5fe:fdfc': true,
        '64:ff9b::7f00:1': true,
        '64:ff9b::a02:1': false,
        '2002:a02:1::1': false,
        '64:ff9b::7f00:2': false,
        // Every private IPv4 address a Teredo address carries must be admitted: here the client is not.
        '2001:0:a01:1::3f57:fefe': false,
        '2001:0:a01:1::f5fe:fdfc': true,
        '0.0.0.0': false,
        '::': false,
        '::1': false,
      },
    );
    // An allow entry that names the IPv6 address itself admits it too; the always-refused ranges still win.
    assertTable(
      { allowPrivate: false, allow: ['64:ff9b::/96'] },
      { '64:ff9b::a00:1': true, '64:ff9b::7f00:1': true, '64:ff9b::a9fe:a9fe': false, '64:ff9b:1::a00:1': false },
    );
  });

  test('fc00::/7 and fec0::/10 are private, edges included', () => {
    const table = {
      'fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff': true,
      'fc00::': false,
      'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff': false,
      'fe00::': true,
      'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff': false,
      'fec0::': false,
      'fec0::1': false,
      'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff': false,
      // ff00::/8 is multicast: refused always.
      'ff00::1': false,
    };
    assertTable({ allowPrivate: false }, table);
    assertTable(
      { allowPrivate: true },
      {
        ...table,
        'fc00::': true,
        'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff': true,
        'fec0::': true,
        'fec0::1': true,
        'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff': true,
      },
    );
    assertTable({ allowPrivate: false, allow: ['fec0::/16'] }, { 'fec0::1': true, 'fec1::1': false });
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
