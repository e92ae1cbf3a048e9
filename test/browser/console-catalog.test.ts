import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { type ConsoleBrowser, cli, openConsoleBrowser, serveWithOwner, untilPage } from '../support/console-browser.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type Env, type ServerProcess, tempDatabase } from '../support/processes.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';

/**
 * The operation catalogue and AI agents (docs/catalog.md) in the console, in a real browser (test/support/console-browser.ts),
 * for an owner, a developer and a viewer: a SOAP integration's operations (from a WSDL served here: two operations on
 * a SOAP 1.1 and a SOAP 1.2 port, one documented), its "AI agents (MCP)" switches saved or shown read-only, try-it-out
 * filling a params template from an operation's input schema, and the AI agents screen listing the tools the MCP
 * server offers. Each screen of each role leaves a screenshot in test-artifacts/console/.
 */

const people = {
  owner: 'ada@example.com',
  developer: 'dev@example.com',
  viewer: 'vic@example.com',
} as const;
const password = 'catalogue console password';

/** The WSDL of a small calculator: Add (documented) and SetMode (not), on a SOAP 1.1 port and a SOAP 1.2 port. */
function calculatorWsdl(address: string): string {
  const binding = (name: string, soap: string) => `
  <binding name="${name}" type="tns:CalculatorPortType">
    <${soap}:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    ${['Add', 'SetMode']
      .map(
        (op) => `<operation name="${op}">
      <${soap}:operation soapAction="urn:calc#${op}"/>
      <input><${soap}:body use="literal"/></input>
      <output><${soap}:body use="literal"/></output>
    </operation>`,
      )
      .join('\n    ')}
  </binding>`;
  return `<?xml version="1.0" encoding="utf-8"?>
<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
  xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
  xmlns:tns="urn:calc" targetNamespace="urn:calc" name="Calculator">
  <types>
    <xs:schema targetNamespace="urn:calc" elementFormDefault="qualified">
      <xs:simpleType name="Mode">
        <xs:restriction base="xs:string"><xs:enumeration value="fast"/><xs:enumeration value="exact"/></xs:restriction>
      </xs:simpleType>
      <xs:complexType name="Options">
        <xs:sequence>
          <xs:element name="verbose" type="xs:boolean"/>
          <xs:element name="label" type="xs:string" minOccurs="0"/>
        </xs:sequence>
      </xs:complexType>
      <xs:element name="Add">
        <xs:complexType><xs:sequence>
          <xs:element name="intA" type="xs:int"/><xs:element name="intB" type="xs:int"/>
        </xs:sequence></xs:complexType>
      </xs:element>
      <xs:element name="AddResponse">
        <xs:complexType><xs:sequence><xs:element name="AddResult" type="xs:int"/></xs:sequence></xs:complexType>
      </xs:element>
      <xs:element name="SetMode">
        <xs:complexType><xs:sequence>
          <xs:element name="mode" type="tns:Mode"/>
          <xs:element name="options" type="tns:Options"/>
          <xs:element name="tags" type="xs:string" maxOccurs="unbounded"/>
          <xs:element name="note" type="xs:string" minOccurs="0"/>
        </xs:sequence></xs:complexType>
      </xs:element>
      <xs:element name="SetModeResponse">
        <xs:complexType><xs:sequence><xs:element name="ok" type="xs:boolean"/></xs:sequence></xs:complexType>
      </xs:element>
    </xs:schema>
  </types>
  <message name="AddIn"><part name="parameters" element="tns:Add"/></message>
  <message name="AddOut"><part name="parameters" element="tns:AddResponse"/></message>
  <message name="SetModeIn"><part name="parameters" element="tns:SetMode"/></message>
  <message name="SetModeOut"><part name="parameters" element="tns:SetModeResponse"/></message>
  <portType name="CalculatorPortType">
    <operation name="Add">
      <documentation>Adds two integers and answers their sum.</documentation>
      <input message="tns:AddIn"/><output message="tns:AddOut"/>
    </operation>
    <operation name="SetMode"><input message="tns:SetModeIn"/><output message="tns:SetModeOut"/></operation>
  </portType>
  ${binding('CalculatorSoap', 'soap')}
  ${binding('CalculatorSoap12', 'soap12')}
  <service name="Calculator">
    <port name="CalculatorSoap" binding="tns:CalculatorSoap"><soap:address location="${address}"/></port>
    <port name="CalculatorSoap12" binding="tns:CalculatorSoap12"><soap12:address location="${address}"/></port>
  </service>
</definitions>`;
}

/** The answer to an Add: the sum of its two integers, in the envelope of the SOAP version it came in. */
function addAnswer(body: string, soap12: boolean): string {
  const number = (name: string) => Number(new RegExp(`<(?:\\w+:)?${name}>(-?\\d+)<`).exec(body)?.[1] ?? 'NaN');
  const envelope = soap12 ? 'http://www.w3.org/2003/05/soap-envelope' : 'http://schemas.xmlsoap.org/soap/envelope/';
  return `<?xml version="1.0" encoding="utf-8"?><s:Envelope xmlns:s="${envelope}"><s:Body>
    <AddResponse xmlns="urn:calc"><AddResult>${number('intA') + number('intB')}</AddResult></AddResponse>
  </s:Body></s:Envelope>`;
}

describe('the operation catalogue and AI agents in the console', () => {
  const db = tempDatabase();
  let env: Env;
  let server: ServerProcess;
  let upstream: RawUpstream;
  let graphql: GraphqlServer;
  let ui: ConsoleBrowser;
  let page: Page;
  let origin: string;
  let accessToken = '';
  const patches: unknown[] = [];

  const api = async (method: string, path: string, payload?: unknown) => {
    const response = await fetch(`${origin}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${accessToken}`,
        'x-tenant-id': 'acme',
        ...(payload !== undefined && { 'content-type': 'application/json' }),
      },
      body: payload === undefined ? undefined : JSON.stringify(payload),
    });
    return { status: response.status, body: (await response.json()) as { data: Record<string, unknown> } };
  };
  const storedCatalog = async () => (await api('GET', '/integrations/calc')).body.data.catalog as Record<string, unknown>;

  const agents = (): Locator => page.getByRole('region', { name: 'AI agents (MCP)' });
  const operations = (): Locator => page.getByRole('list', { name: 'Operations of Calculator' });
  const operation = (name: string): Locator =>
    operations()
      .getByRole('listitem')
      .filter({ has: page.getByRole('heading', { name, exact: true }) });
  /** The tool names the AI agents screen lists, in its order. */
  const listedTools = async () =>
    page
      .getByRole('table', { name: /Tools offered/ })
      .getByRole('rowheader')
      .allInnerTexts();

  const openIntegration = async () => {
    await page.goto(`${origin}/console/t/acme/integrations/calc`);
    await page.getByRole('heading', { name: 'Calculator', level: 1 }).waitFor();
    await operation('Add').waitFor();
  };
  const openAgents = async () => {
    await ui.nav('AI agents').click();
    await page.getByRole('heading', { name: 'AI agents', level: 1 }).waitFor();
    assert.match(new URL(page.url()).pathname, /^\/console\/t\/acme\/agents$/);
  };
  const openTryItOut = async () => {
    await ui.nav('Try it out').click();
    await page.getByRole('heading', { name: 'Try it out' }).waitFor();
    await page.getByLabel('Integration').selectOption('calc');
    await page
      .getByLabel('WSDL operation')
      .getByRole('option', { name: 'SetMode (write)', exact: true })
      .waitFor({ state: 'attached' });
  };
  /** Picks an operation in try-it-out and answers the request body it filled in. */
  const pick = async (name: string) => {
    await page.getByLabel('WSDL operation').selectOption(name);
    return JSON.parse(await page.getByLabel('Body (JSON)').inputValue());
  };
  const switchTo = async (role: keyof typeof people) => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await ui.signIn(people[role], password);
  };

  before(async () => {
    upstream = await httpUpstream((req, res, body) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' }).end(calculatorWsdl(`${upstream.url}/calc`));
        return;
      }
      const soap12 = String(req.headers['content-type']).startsWith('application/soap+xml');
      res
        .writeHead(200, { 'content-type': soap12 ? 'application/soap+xml; charset=utf-8' : 'text/xml; charset=utf-8' })
        .end(addAnswer(body, soap12));
    });
    env = { ...db.env };
    ({ server, origin, accessToken } = await serveWithOwner(env, people.owner, password));
    for (const role of ['developer', 'viewer'] as const) {
      await cli(['users', 'create', people[role], '--name', role, '--password-stdin'], env, `${password}\n`);
      await cli(['users', 'grant', people[role], '--tenant', 'acme', '--role', role], env);
    }
    // A tenant with nothing offered, where the viewer is a viewer too.
    await cli(['tenants', 'create', 'beta', '--name', 'Beta Labs'], env);
    await cli(['users', 'grant', people.viewer, '--tenant', 'beta', '--role', 'viewer'], env);
    for (const [id, name, url] of [
      ['calc', 'Calculator', `${upstream.url}/calc?wsdl`],
      ['legacy', 'Legacy calculator', `${upstream.url}/calc`],
    ]) {
      const put = await api('PUT', `/integrations/${id}`, { name, connector: 'soap-1.0.0', config: { endpoint_url: url } });
      assert.equal(put.status, 201, JSON.stringify(put.body));
    }
    graphql = await startGraphqlServer();
    const put = await api('PUT', '/integrations/people', {
      name: 'People directory',
      connector: 'graphql-1.0.0',
      config: { base_url: graphql.origin },
    });
    assert.equal(put.status, 201, JSON.stringify(put.body));

    ui = await openConsoleBrowser(origin, { clipboard: true });
    page = ui.page;
    page.on('request', (request) => {
      if (request.method() === 'PATCH' && new URL(request.url()).pathname === '/api/v1/integrations/calc') {
        patches.push(request.postDataJSON());
      }
    });
    await ui.signIn(people.owner, password);
  });

  after(async () => {
    await ui?.close();
    await server?.stop();
    await upstream?.close();
    await graphql?.close();
    db.cleanup();
  });

  test('owner: the operations of a WSDL, a page at a time, with their kinds, descriptions and schemas', async () => {
    // Pages of two, so that "Load more" has something to load.
    const small = (url: URL) => url.pathname === '/api/v1/integrations/calc/operations';
    await page.route(small, (route) => {
      const url = new URL(route.request().url());
      url.searchParams.set('limit', '2');
      return route.continue({ url: url.href });
    });
    await openIntegration();
    assert.equal(await operations().getByRole('listitem').count(), 2);
    await page.getByRole('button', { name: 'Load more' }).click();
    await operation('Calculator.CalculatorSoap12.SetMode').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0, 'every entry is shown');
    assert.deepEqual(await operations().getByRole('heading').allInnerTexts(), [
      'Add',
      'SetMode',
      'Calculator.CalculatorSoap12.Add',
      'Calculator.CalculatorSoap12.SetMode',
    ]);
    await page.unroute(small);

    const add = operation('Add');
    assert.match(await add.innerText(), /write[\s\S]*Adds two integers and answers their sum\./);
    // The WSDL does not document SetMode: the catalogue says what it is.
    assert.match(await operation('SetMode').innerText(), /write[\s\S]*SOAP operation SetMode of service Calculator/);
    await add.getByText('Input and output schema').click();
    assert.match(await add.getByLabel('Input schema of Add').innerText(), /"intA"[\s\S]*"integer"/);
    assert.match(await add.getByLabel('Output schema of Add').innerText(), /"AddResult"/);

    // Marked read-only: saved at once, and its kind follows.
    await add.getByRole('checkbox', { name: 'Read-only: Add' }).check();
    await page.getByRole('status').filter({ hasText: 'Add is read-only now.' }).waitFor();
    await add.getByText('read', { exact: true }).waitFor();
    assert.deepEqual((await storedCatalog()).read_operations, ['Add']);
    await ui.shot('catalog-owner-integration');
    ui.assertClean();
  });

  test('owner: a raw SOAP integration says it has no catalogue', async () => {
    await page.goto(`${origin}/console/t/acme/integrations/legacy`);
    await page.getByRole('heading', { name: 'Legacy calculator', level: 1 }).waitFor();
    await page.getByText('No catalogue in raw mode').waitFor();
    await ui.shot('catalog-owner-raw-soap');
    ui.assertClean();
  });

  test('owner: a GraphQL integration lists its root fields once they are operations', async () => {
    await page.goto(`${origin}/console/t/acme/integrations/people`);
    await page.getByRole('heading', { name: 'People directory', level: 1 }).waitFor();
    await page.getByText('No operations yet').waitFor();
    const rootFields = agents().getByRole('switch', { name: 'Root fields as operations' });
    await rootFields.check();
    await agents().getByRole('status').filter({ hasText: 'Root fields are now operations.' }).waitFor();
    const list = page.getByRole('list', { name: 'Operations of People directory' });
    const entry = (name: string) => list.getByRole('listitem').filter({ has: page.getByRole('heading', { name, exact: true }) });
    await entry('users').waitFor();
    assert.match(await entry('users').innerText(), /read/);
    assert.match(await entry('createUser').innerText(), /write/);
    assert.equal(await list.getByRole('checkbox').count(), 0, 'a GraphQL operation’s kind is its operation type');
    await ui.shot('catalog-owner-graphql');

    // Try it out keeps its GraphQL editor and offers no WSDL operation.
    await ui.nav('Try it out').click();
    await page.getByLabel('Integration').selectOption('people');
    await page.getByLabel('Operation', { exact: true }).selectOption('receive');
    await page.getByText('GraphQL document').waitFor();
    assert.equal(await page.getByLabel('WSDL operation').count(), 0);
    ui.assertClean();
  });

  test('owner: nothing is offered at first; offering the integration lists its read operations as tools', async () => {
    await openAgents();
    const empty = page.getByText('No tools offered yet');
    await empty.waitFor();
    await page.getByRole('link', { name: 'an integration' }).waitFor();
    const config = await page.getByLabel('MCP client configuration').innerText();
    const parsed = JSON.parse(config);
    assert.deepEqual(parsed.mcpServers.interchange, {
      type: 'http',
      url: `${origin}/api/v1/mcp`,
      headers: { 'X-API-Key': '<your API key>', 'X-Tenant-ID': 'acme' },
    });
    assert.equal(await page.getByRole('textbox', { name: 'Address' }).inputValue(), `${origin}/api/v1/mcp`);
    await page.getByRole('button', { name: 'Copy the client configuration' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), config);
    await ui.shot('catalog-owner-agents-empty');

    await openIntegration();
    const offer = agents().getByRole('switch', { name: 'Offer to AI agents' });
    assert.equal(await offer.isChecked(), false);
    await offer.check();
    await agents().getByRole('status').filter({ hasText: 'Offered to AI agents.' }).waitFor();
    assert.equal(await offer.isChecked(), true);
    assert.equal((await storedCatalog()).mcp, true);
    assert.deepEqual(patches.at(-1), { catalog: { mcp: true } });
    assert.equal(await agents().getByRole('switch', { name: 'Allow writes' }).isChecked(), false);

    await openAgents();
    await page.getByRole('heading', { name: 'Tools offered (1)' }).waitFor();
    assert.deepEqual(await listedTools(), ['calc.Add']);
    const row = ui.row('calc.Add');
    assert.match(await row.innerText(), /calc[\s\S]*read[\s\S]*Adds two integers/);
    await row.getByRole('link', { name: 'calc' }).waitFor();
    await ui.shot('catalog-owner-agents');
    ui.assertClean();
  });

  test('owner: try it out fills the params of a chosen operation, and the call runs', async () => {
    await openTryItOut();
    const setMode = await pick('SetMode');
    assert.equal(await page.getByLabel('Operation', { exact: true }).inputValue(), 'send');
    assert.deepEqual(setMode, { method: 'SetMode', params: { mode: 'fast', options: { verbose: false }, tags: [''] } });

    const response = page.getByLabel('Response body');
    const run = async (body: unknown, sum: number) => {
      await page.getByLabel('Body (JSON)').fill(JSON.stringify(body, null, 2));
      await page.getByRole('button', { name: 'Run' }).click();
      await untilPage(`the answer shows ${sum}`, async () =>
        (await response.count()) > 0 ? (await response.innerText()).includes(`"AddResult": ${sum}`) : false,
      );
      await page.getByText('HTTP 200').waitFor();
    };

    // Of the SOAP 1.2 port: its own entry, still a write (only Add of the default port is marked read-only).
    const add12 = await pick('Calculator.CalculatorSoap12.Add');
    assert.equal(await page.getByLabel('Operation', { exact: true }).inputValue(), 'send');
    assert.deepEqual(add12, { method: 'Add', service: 'Calculator', port: 'CalculatorSoap12', params: { intA: 0, intB: 0 } });
    await run({ ...add12, params: { intA: 20, intB: 22 } }, 42);

    const add = await pick('Add');
    assert.equal(await page.getByLabel('Operation', { exact: true }).inputValue(), 'receive', 'Add is read-only now');
    assert.deepEqual(add, { method: 'Add', params: { intA: 0, intB: 0 } });
    await run({ ...add, params: { intA: 2, intB: 3 } }, 5);
    await ui.shot('catalog-owner-try-it-out');
    ui.assertClean();
  });

  test('developer: allows writes, and every operation is a tool', async () => {
    await switchTo('developer');
    await openIntegration();
    const writes = agents().getByRole('switch', { name: 'Allow writes' });
    assert.equal(await agents().getByRole('switch', { name: 'Offer to AI agents' }).isChecked(), true);
    assert.equal(await writes.isEnabled(), true);
    // From the keyboard: the switch is disabled while its change saves, and has the focus again once saved.
    await writes.focus();
    await page.keyboard.press('Space');
    await agents().getByRole('status').filter({ hasText: 'Agents may now run its write operations.' }).waitFor();
    assert.equal(await writes.isChecked(), true);
    assert.equal((await storedCatalog()).allow_writes, true);
    await untilPage('the switch has the focus again', () => page.evaluate(() => document.activeElement?.id === 'catalog-writes'));
    await operation('SetMode').getByRole('checkbox', { name: 'Read-only: SetMode' }).waitFor();
    await ui.shot('catalog-developer-integration');

    await openAgents();
    await page.getByRole('heading', { name: 'Tools offered (4)' }).waitFor();
    assert.deepEqual(await listedTools(), [
      'calc.Add',
      'calc.SetMode',
      'calc.Calculator.CalculatorSoap12.Add',
      'calc.Calculator.CalculatorSoap12.SetMode',
    ]);
    assert.match(await ui.row('calc.SetMode').innerText(), /write/);
    assert.match(await page.getByLabel('MCP client configuration').innerText(), /"X-Tenant-ID": "acme"/);
    await ui.shot('catalog-developer-agents');

    await openTryItOut();
    assert.deepEqual(await pick('Calculator.CalculatorSoap12.SetMode'), {
      method: 'SetMode',
      service: 'Calculator',
      port: 'CalculatorSoap12',
      params: { mode: 'fast', options: { verbose: false }, tags: [''] },
    });
    await ui.shot('catalog-developer-try-it-out');
    ui.assertClean();
  });

  test('a change someone made meanwhile is not overwritten: the switch says so, and the page reloads it', async () => {
    await openIntegration();
    const writes = agents().getByRole('switch', { name: 'Allow writes' });
    assert.equal(await writes.isChecked(), true);
    const changed = await api('PATCH', '/integrations/calc', { config: { timeout_seconds: 30 } });
    assert.equal(changed.status, 200);
    ui.expected.add('412 /api/v1/integrations/calc');
    await writes.click();
    const alert = agents().getByRole('alert');
    await alert.getByText('Not saved', { exact: true }).waitFor();
    assert.match(await alert.innerText(), /Someone changed or deleted this integration after you opened it/);
    assert.equal(await writes.isChecked(), true, 'the switch shows what is saved');
    assert.equal((await storedCatalog()).allow_writes, true);
    await ui.shot('catalog-developer-integration-stale');
    await agents().getByRole('button', { name: 'Reload the current version' }).click();
    await untilPage(
      'the form shows the other change',
      async () => (await page.getByLabel('Timeout (seconds)').inputValue()) === '30',
    );
    assert.equal(await agents().getByRole('alert').count(), 0);
    ui.expected.delete('412 /api/v1/integrations/calc');
    ui.assertClean();
  });

  test('the tools are read from an SSE answer too, page after page', async () => {
    // The server's tools/list answers as JSON; another MCP server may answer as an event stream and in pages.
    const mcp = (url: URL) => url.pathname === '/api/v1/mcp';
    const cursors: unknown[] = [];
    await page.route(mcp, async (route) => {
      const asked = route.request().postDataJSON() as { id: number; params: { cursor?: string } };
      cursors.push(asked.params.cursor ?? null);
      assert.match(route.request().headers().accept, /text\/event-stream/);
      assert.equal(route.request().headers()['mcp-protocol-version'], '2025-11-25');
      const answer = await route.fetch({ postData: { ...asked, params: {} } });
      const { tools } = ((await answer.json()) as { result: { tools: unknown[] } }).result;
      const result = asked.params.cursor ? { tools: tools.slice(2) } : { tools: tools.slice(0, 2), nextCursor: 'page-2' };
      const events = [': keep-alive', `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: asked.id, result })}`];
      await route.fulfill({ status: 200, contentType: 'text/event-stream', body: `${events.join('\n\n')}\n\n` });
    });
    try {
      await page.goto(`${origin}/console/t/acme/agents`);
      await page.getByRole('heading', { name: 'Tools offered (4)' }).waitFor();
      assert.deepEqual(await listedTools(), [
        'calc.Add',
        'calc.SetMode',
        'calc.Calculator.CalculatorSoap12.Add',
        'calc.Calculator.CalculatorSoap12.SetMode',
      ]);
      assert.deepEqual(cursors, [null, 'page-2']);
    } finally {
      await page.unroute(mcp);
    }
    ui.assertClean();
  });

  test('viewer: sees the operations, the settings and the tools, and can change none of them', async () => {
    const before = patches.length;
    await switchTo('viewer');
    await openIntegration();
    const offer = agents().getByRole('switch', { name: 'Offer to AI agents' });
    const writes = agents().getByRole('switch', { name: 'Allow writes' });
    assert.equal(await offer.isChecked(), true);
    assert.equal(await writes.isChecked(), true);
    assert.equal(await offer.isDisabled(), true);
    assert.equal(await writes.isDisabled(), true);
    await agents().getByText('Your role can see these settings but not change them.').waitFor();
    assert.equal(await operations().getByRole('checkbox').count(), 0, 'no read-only marks to change');
    assert.match(await operation('Add').innerText(), /read/);
    assert.equal(await page.getByRole('button', { name: 'Save changes' }).count(), 0);
    await ui.shot('catalog-viewer-integration');

    await openAgents();
    await page.getByRole('heading', { name: 'Tools offered (4)' }).waitFor();
    await ui.shot('catalog-viewer-agents');

    await openTryItOut();
    assert.deepEqual(await pick('Add'), { method: 'Add', params: { intA: 0, intB: 0 } });
    assert.equal(await page.getByRole('button', { name: 'Run' }).isDisabled(), true);
    await ui.shot('catalog-viewer-try-it-out');

    // Where nothing is offered, a viewer is told who can offer tools, with no link to do it.
    await page.getByLabel('Tenant').selectOption('beta');
    await ui.nav('AI agents').click();
    await page.getByText('No tools offered yet').waitFor();
    await page.getByText('An owner, admin or developer of this tenant can offer them.').waitFor();
    assert.equal(await page.getByRole('link', { name: 'an integration' }).count(), 0);
    assert.match(await page.getByLabel('MCP client configuration').innerText(), /"X-Tenant-ID": "beta"/);
    await ui.shot('catalog-viewer-agents-empty');
    assert.equal(patches.length, before, 'a viewer sent no change');

    // On a phone's width, nothing runs off the side.
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const [path, ready, step] of [
        ['/console/t/acme/agents', page.getByRole('heading', { name: 'Tools offered (4)' }), 'catalog-viewer-agents-narrow'],
        ['/console/t/acme/integrations/calc', operation('Add'), 'catalog-viewer-integration-narrow'],
      ] as const) {
        await page.goto(`${origin}${path}`);
        await ready.waitFor();
        assert.equal(
          await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
          true,
          `${path} fits a narrow screen`,
        );
        await ui.shot(step);
      }
    } finally {
      await page.setViewportSize({ width: 1440, height: 900 });
    }
    ui.assertClean();
  });
});
