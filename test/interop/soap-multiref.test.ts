import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, assertOk } from '../support/assertions.ts';
import { withEventLoopDelay } from '../support/event-loop-delay.ts';
import { type Auth, type Harness, harness } from '../support/harness.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';
import { type CorpusServer, corpusEntries, describeWithCorpus, serveCorpus, zeepReplies } from '../support/wsdl-corpus.ts';

/**
 * SOAP 1.1 encoding's multi-reference values (§5.4.1) in answers, shaped exactly as Axis 1 sends them by default
 * (`<getIssueReturn href="#id0"/>` and `<multiRef id="id0" soapenc:root="0" …>` beside the response element): resolved
 * in raw mode and in WSDL mode. With the corpus, the Jira WSDL's answers are compared with python-zeep's reading of the
 * same envelopes.
 */

const ENV = 'http://schemas.xmlsoap.org/soap/envelope/';
const ENC = 'http://schemas.xmlsoap.org/soap/encoding/';
const BEANS = 'http://beans.soap.rpc.jira.atlassian.com';

/** An Axis 1 answer: the response element, then the independent `multiRef` elements. */
function axisAnswer(response: string, ...multiRefs: string[]): string {
  return (
    `<?xml version="1.0" encoding="utf-8"?><soapenv:Envelope xmlns:soapenv="${ENV}" ` +
    'xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>' +
    `${response}${multiRefs.join('')}</soapenv:Body></soapenv:Envelope>`
  );
}

function multiRef(id: string, type: string, inner: string): string {
  return (
    `<multiRef id="${id}" soapenc:root="0" soapenv:encodingStyle="${ENC}" xsi:type="ns9:${type}" ` +
    `xmlns:soapenc="${ENC}" xmlns:ns9="${BEANS}">${inner}</multiRef>`
  );
}

const str = (name: string, value: string) => `<${name} xsi:type="xsd:string">${value}</${name}>`;

const components = axisAnswer(
  `<ns1:getComponentsResponse soapenv:encodingStyle="${ENC}" xmlns:ns1="http://soap.rpc.jira.atlassian.com">` +
    `<getComponentsReturn soapenc:arrayType="ns2:RemoteComponent[2]" xsi:type="soapenc:Array" xmlns:soapenc="${ENC}" xmlns:ns2="${BEANS}">` +
    '<getComponentsReturn href="#id0"/><getComponentsReturn href="#id1"/></getComponentsReturn></ns1:getComponentsResponse>',
  multiRef('id0', 'RemoteComponent', str('id', '10000') + str('name', 'Backend')),
  multiRef('id1', 'RemoteComponent', str('id', '10001') + str('name', 'Frontend')),
);

/** An issue whose components array is itself a multiRef, with items that are multiRefs too; one shared twice. */
const issue = axisAnswer(
  `<ns1:getIssueResponse soapenv:encodingStyle="${ENC}" xmlns:ns1="http://soap.rpc.jira.atlassian.com">` +
    '<getIssueReturn href="#id0"/></ns1:getIssueResponse>',
  multiRef(
    'id0',
    'RemoteIssue',
    `${str('id', '10042')}<affectsVersions soapenc:arrayType="ns9:RemoteVersion[0]" xsi:type="soapenc:Array" xmlns:soapenc="${ENC}"/>` +
      `${str('assignee', 'admin')}<components href="#id1"/>${str('key', 'IX-42')}${str('summary', 'Resolve multiRefs')}` +
      '<votes href="#id4"/>',
  ),
  `<multiRef id="id1" soapenc:root="0" soapenv:encodingStyle="${ENC}" soapenc:arrayType="ns9:RemoteComponent[3]" ` +
    `xsi:type="soapenc:Array" xmlns:soapenc="${ENC}" xmlns:ns9="${BEANS}">` +
    '<components href="#id2"/><components href="#id3"/><components href="#id2"/></multiRef>',
  multiRef('id2', 'RemoteComponent', str('id', '10000') + str('name', 'Backend')),
  multiRef('id3', 'RemoteComponent', str('id', '10001') + str('name', 'Frontend')),
  `<multiRef id="id4" soapenc:root="0" soapenv:encodingStyle="${ENC}" xsi:type="xsd:long" xmlns:soapenc="${ENC}">7</multiRef>`,
);

/** An app, a tenant key, and an upstream that answers every POST with `answer.xml` (set by each test). */
interface AnsweringSetup {
  h: Harness;
  auth: Auth;
  upstream: RawUpstream;
  answer: { xml: string };
  /** PUTs a SOAP integration `id` with `config`. */
  put(id: string, config: Record<string, unknown>): Promise<void>;
  /** receive of `method` (with `params`) through integration `id`. */
  receive(id: string, method: string, params?: Record<string, unknown>): ReturnType<Harness['call']>;
  close(): Promise<void>;
}

async function answering(): Promise<AnsweringSetup> {
  const h = await harness();
  await h.tenant('acme');
  const auth = await h.auth('acme', ['integrations.*']);
  const answer = { xml: '' };
  const upstream = await httpUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' }).end(answer.xml);
  });
  return {
    h,
    auth,
    upstream,
    answer,
    async put(id, config) {
      const res = await h.call(auth, {
        method: 'PUT',
        url: `/api/v1/integrations/${id}`,
        payload: { connector: 'soap-1.0.0', config },
      });
      assert.equal(res.statusCode, 201, res.body);
    },
    receive: (id, method, params) =>
      h.call(auth, {
        method: 'POST',
        url: `/api/v1/integrations/${id}/execute`,
        payload: { operation: 'receive', method, params },
      }),
    async close() {
      await upstream.close();
      await h.close();
    },
  };
}

describe('multi-reference values in raw mode', () => {
  let setup: AnsweringSetup;

  before(async () => {
    setup = await answering();
    await setup.put('axis', { endpoint_url: `${setup.upstream.url}/rpc/soap/jirasoapservice-v2`, namespace: BEANS });
  });
  after(() => setup.close());

  const call = () => setup.receive('axis', 'getIssue');
  const typed = (type: string, value: string) => ({ $attributes: { type }, $value: value });

  test('an accessor is replaced by its multiRef, nested ones too, and a value referenced twice is there twice', async () => {
    setup.answer.xml = issue;
    const component = (id: string, name: string) => ({
      $attributes: { type: 'ns9:RemoteComponent' },
      id: typed('xsd:string', id),
      name: typed('xsd:string', name),
    });
    assert.deepEqual(assertOk(await call()), {
      // Raw mode shows the response element's own attributes, as it always has.
      $attributes: { encodingStyle: ENC },
      getIssueReturn: {
        $attributes: { type: 'ns9:RemoteIssue' },
        id: typed('xsd:string', '10042'),
        affectsVersions: { $attributes: { arrayType: 'ns9:RemoteVersion[0]', type: 'soapenc:Array' } },
        assignee: typed('xsd:string', 'admin'),
        components: {
          $attributes: { arrayType: 'ns9:RemoteComponent[3]', type: 'soapenc:Array' },
          components: [component('10000', 'Backend'), component('10001', 'Frontend'), component('10000', 'Backend')],
        },
        key: typed('xsd:string', 'IX-42'),
        summary: typed('xsd:string', 'Resolve multiRefs'),
        votes: typed('xsd:long', '7'),
      },
    });
  });

  test('a cycle is cut where it closes, and a reference to no element stays as read', async () => {
    setup.answer.xml = axisAnswer(
      '<ns1:getIssueResponse xmlns:ns1="urn:x"><getIssueReturn href="#a"/><other href="#nowhere"/></ns1:getIssueResponse>',
      '<multiRef id="a"><name>A</name><next href="#b"/></multiRef>',
      '<multiRef id="b"><name>B</name><next href="#a"/></multiRef>',
    );
    assert.deepEqual(assertOk(await call()), {
      getIssueReturn: { name: 'A', next: { name: 'B', next: { $attributes: { href: '#a' } } } },
      other: { $attributes: { href: '#nowhere' } },
    });
  });

  test('references that double at every step are refused before they expand: 502 upstream_invalid_response', async () => {
    const refs = Array.from(
      { length: 40 },
      (_, i) => `<multiRef id="r${i}"><l href="#r${i + 1}"/><r href="#r${i + 1}"/></multiRef>`,
    );
    setup.answer.xml = axisAnswer(
      '<ns1:getIssueResponse xmlns:ns1="urn:x"><getIssueReturn href="#r0"/></ns1:getIssueResponse>',
      ...refs,
    );
    const error = assertError(await call(), 502, 'upstream_invalid_response');
    assert.match(error.message, /expand to more than 1000000 values/);
  });

  /** `accessors` references to one multiRef `m` holding `inner`: what N×M bombs are made of. */
  const bomb = (accessors: number, inner: string) =>
    axisAnswer(
      `<ns1:getIssueResponse xmlns:ns1="urn:x">${'<i href="#m"/>'.repeat(accessors)}</ns1:getIssueResponse>`,
      `<multiRef id="m">${inner}</multiRef>`,
    );

  test('N references to one element of M texts (64 KB → 4,000,000 values) are refused before any copy, the event loop free', async (t) => {
    setup.answer.xml = bomb(4_000, '<s>x</s>'.repeat(1_000));
    t.diagnostic(`answer: ${setup.answer.xml.length} bytes`);
    const { result, maxDelayMs } = await withEventLoopDelay(call);
    const error = assertError(result, 502, 'upstream_invalid_response');
    assert.match(error.message, /expand to more than 1000000 values/);
    // Reported, not asserted (a loaded machine cannot fail it): the refusal comes from the counting pass, before any copy.
    t.diagnostic(`event loop held at most ${maxDelayMs.toFixed(0)} ms (2,600 ms before the bound counted texts)`);
  });

  test('references to one large text beyond IX_EXECUTE_MAX_BYTES once resolved are refused (read off the main thread)', async () => {
    // 40 references to 1.1 MB: 44 MB resolved, over the 32 MiB default; the answer itself (over 1 MiB) is read by a
    // worker thread, which is given the same bound.
    setup.answer.xml = bomb(40, `<s>${'x'.repeat(1_100_000)}</s>`);
    const error = assertError(await call(), 502, 'upstream_invalid_response');
    assert.match(error.message, /expand to more than 33554432 bytes \(IX_EXECUTE_MAX_BYTES\)/);
  });

  test('a 770 KB answer of references (50,000 × 20 texts) is refused, and the next answer is read as usual', async () => {
    setup.answer.xml = bomb(50_000, '<s>x</s>'.repeat(20));
    const error = assertError(await call(), 502, 'upstream_invalid_response');
    assert.match(error.message, /expand to more than 1000000 values/);
    // And the next answer is read as usual.
    setup.answer.xml = issue;
    assertOk(await call());
  });
});

describeWithCorpus('answers read as python-zeep reads them (corpus WSDLs)', () => {
  let setup: AnsweringSetup;
  let corpus: CorpusServer;

  before(async () => {
    setup = await answering();
    corpus = await serveCorpus();
  });
  after(async () => {
    await corpus.close();
    await setup.close();
  });

  /** Integration `id` on corpus entry `name`, its calls answered by the test's upstream; the WSDL's URL. */
  async function onCorpus(id: string, name: string): Promise<string> {
    const entry = corpusEntries().find((candidate) => candidate.name === name);
    assert.ok(entry, `the corpus has ${name}`);
    await setup.put(id, { endpoint_url: corpus.url(entry), service_url: setup.upstream.url });
    return corpus.url(entry);
  }

  /** zeep's value without the fields it fills with null for elements the answer does not have. */
  function withoutNulls(value: unknown): unknown {
    if (Array.isArray(value)) return value.map(withoutNulls);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, item]) => item !== null)
        .map(([key, item]) => [key, withoutNulls(item)]),
    );
  }

  for (const [operation, reply, part] of [
    ['getComponents', components, 'getComponentsReturn'],
    ['getIssue', issue, 'getIssueReturn'],
  ] as const) {
    test(`axis1-jira ${operation}: multi-reference values give zeep's values, types and lists`, async () => {
      const wsdl = await onCorpus(`jira-${operation}`, 'axis1-jira');
      setup.answer.xml = reply;
      const [zeep] = await zeepReplies([{ wsdl, operation, reply }]);
      assert.ok('value' in zeep, JSON.stringify(zeep));
      const data = assertOk(await setup.receive(`jira-${operation}`, operation, { in0: 'token', in1: 'IX' }));
      // Normalisation: zeep returns the one part's value; it shows absent elements as null, and an empty array as [].
      assert.deepEqual(data[part], withoutNulls(zeep.value));
    });
  }

  test('mssql-native: sqltypes:int, a simple type restricting xsd:int, is the number 2, not the text "2"', async () => {
    // `<simpleType name="int"><restriction base="xsd:int"/></simpleType>`, which node-soap's tables drop.
    const reply =
      '<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
      '<DayAsNumberResponse xmlns="http://tempUri.org/"><DayAsNumberResult>2</DayAsNumberResult></DayAsNumberResponse>' +
      '</soap:Body></soap:Envelope>';
    const wsdl = await onCorpus('mssql', 'mssql-native');
    setup.answer.xml = reply;
    const res = await setup.receive('mssql', 'DayAsNumber', { day: '2026-11-27T00:00:00' });
    const [zeep] = await zeepReplies([{ wsdl, operation: 'DayAsNumber', reply }]);
    assert.ok('value' in zeep, JSON.stringify(zeep));
    // zeep returns the one output element's value unwrapped.
    assert.deepEqual(assertOk(res), { DayAsNumberResult: zeep.value });
    assert.equal(zeep.value, 2);
  });
});
