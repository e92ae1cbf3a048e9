import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { type ConsoleBrowser, openConsoleBrowser, serveWithOwner, untilPage } from '../support/console-browser.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type ServerProcess, tempDatabase } from '../support/processes.ts';

/**
 * Try-it-out's GraphQL document editor (issue 22) in a real browser: CodeMirror with cm6-graphql, served from
 * node_modules under the console's CSP. Against an upstream that answers introspection, a misspelt field is
 * underlined where it is with graphql-js's message and names are completed from the schema; against one that refuses
 * introspection the editor says so, checks only the syntax, and still sends. What the editor holds is what is sent.
 */

const email = 'ada@example.com';
const password = 'a long enough console password';

/** An upstream that refuses introspection (as many public APIs do) and answers any other query. */
async function refusingUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const query = String((JSON.parse(text || '{}') as { query?: unknown }).query ?? '');
    const answer = query.includes('__schema')
      ? { errors: [{ message: 'GraphQL introspection is not allowed' }] }
      : { data: { hello: 'world' } };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

describe('the GraphQL document editor of try-it-out in a real browser', () => {
  const db = tempDatabase();
  let server: ServerProcess;
  let upstream: GraphqlServer;
  let refusing: Awaited<ReturnType<typeof refusingUpstream>>;
  let ui: ConsoleBrowser;
  let page: Page;
  let origin: string;
  /** Paths the page fetched, in order. */
  const fetched: string[] = [];

  const editor = (): Locator => page.getByRole('textbox', { name: 'GraphQL document' });
  const problems = (): Locator => page.getByRole('list', { name: 'Problems in the document' });
  const response = (): Locator => page.getByRole('region', { name: 'Response' });
  const bodyField = async () => JSON.parse(await page.getByLabel('Body (JSON)').inputValue()) as Record<string, unknown>;
  /** Empties the editor and types `text` into it, as a person would (brackets close themselves as they type). */
  const typeDocument = async (text: string) => {
    await editor().click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type(text);
  };
  const choose = async (integration: string, operation: string) => {
    await page.getByLabel('Integration').selectOption(integration);
    await page.getByLabel('Operation').selectOption(operation);
  };

  before(async () => {
    upstream = await startGraphqlServer();
    refusing = await refusingUpstream();
    let accessToken: string;
    ({ server, origin, accessToken } = await serveWithOwner({ ...db.env }, email, password));
    const integrations: Record<string, { connector: string; config: Record<string, unknown> }> = {
      people: { connector: 'graphql-1.0.0', config: { base_url: upstream.url } },
      legacy: { connector: 'graphql-1.0.0', config: { base_url: refusing.url } },
      ledger: { connector: 'soap-1.0.0', config: { endpoint_url: 'http://127.0.0.1:9/ledger' } },
    };
    for (const [id, { connector, config }] of Object.entries(integrations)) {
      const put = await fetch(`${origin}/api/v1/integrations/${id}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${accessToken}`, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
        body: JSON.stringify({ name: id, connector, config }),
      });
      assert.equal(put.status, 201, `${id}: ${await put.text()}`);
    }

    ui = await openConsoleBrowser(origin);
    page = ui.page;
    page.on('request', (request) => fetched.push(new URL(request.url()).pathname));
    await ui.signIn(email, password);
  });

  after(async () => {
    await ui?.close();
    await server?.stop();
    await upstream?.close();
    await refusing?.close();
    db.cleanup();
  });

  test('other screens do not load the editor; try-it-out loads it for a GraphQL receive', async (t) => {
    await ui.nav('Integrations').click();
    await page.getByRole('heading', { name: 'Integrations' }).waitFor();
    await ui.nav('Try it out').click();
    await page.getByRole('heading', { name: 'Try it out' }).waitFor();
    const editorCode = (path: string) => /codemirror|cm6-graphql|graphql-language-service|\/graphql\/|graphql-editor/.test(path);
    assert.deepEqual(fetched.filter(editorCode), [], 'nothing of the editor before it is needed');

    await choose('people', 'receive');
    await editor().waitFor();
    await page.getByText('Checked against the integration’s schema').waitFor();
    assert.equal(fetched.filter((path) => path === '/api/v1/integrations/people/schema').length, 1);
    // Styled by CodeMirror's own sheet (constructed, which the CSP allows): line numbers sit in a gutter beside it.
    const gutter = await page.locator('.cm-gutters').boundingBox();
    const content = await editor().boundingBox();
    assert.ok(gutter && content && gutter.x + gutter.width <= content.x, 'the gutter is beside the text');
    const bytes = await page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .filter((entry) => /\/console\/vendor\/|graphql-editor|graphql-field|nullthrows/.test(entry.name))
        .filter((entry) => !/(preact|htm)[^/]*\.mjs$/.test(entry.name))
        .reduce((sum, entry) => sum + (entry as PerformanceResourceTiming).decodedBodySize, 0),
    );
    t.diagnostic(`the editor's modules: ${fetched.filter(editorCode).length} files, ${bytes} bytes`);
    await ui.shot('g1-editor-with-schema');
    ui.assertClean();
  });

  test('a misspelt field is underlined where it is, with graphql-js’s message', async () => {
    const document = '{ user(id: "1") { id nmae } }';
    await typeDocument(document);
    assert.equal((await editor().innerText()).trim(), document);
    assert.equal((await bodyField()).query, undefined, 'the document is shown once, in its editor, not in the body too');
    const column = document.indexOf('nmae') + 1;
    await problems()
      .getByText(`Line 1, column ${column}: Cannot query field "nmae" on type "User". Did you mean "name"?`)
      .waitFor();
    const underlined = editor().locator('.cm-lintRange-error');
    await untilPage('the misspelt field underlined', async () => (await underlined.allInnerTexts()).join('') === 'nmae');
    await underlined.hover();
    await page.locator('.cm-tooltip-lint').getByText('Cannot query field "nmae" on type "User".').waitFor();
    await ui.shot('g2-misspelt-field');
    ui.assertClean();
  });

  test('a field and an argument are completed from the schema; the corrected document is sent', async () => {
    await typeDocument('{ users(fi');
    await page.getByRole('option', { name: /^first/ }).waitFor();
    await page.keyboard.press('Escape');

    await typeDocument('{ user(id: "1") { id na');
    await page.getByRole('option', { name: /^name/ }).waitFor();
    await ui.shot('g3-completion');
    await page.getByRole('option', { name: /^name/ }).click();
    await untilPage('the completed document', async () => /\bid name\b/.test(await editor().innerText()));
    const sent = (await editor().innerText()).trim();
    await untilPage('no problems left', async () => (await problems().count()) === 0);

    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await response().getByText('HTTP 200').waitFor();
    await response().getByLabel('Response body').getByText('User 1').first().waitFor();
    const queries = upstream.requests.map((r) => (r.body as { query?: string }).query ?? '');
    assert.equal(queries.filter((q) => !q.includes('__schema')).at(-1), sent, 'what the editor held is what was sent');
    await ui.shot('g4-sent');
    ui.assertClean();
  });

  test('an upstream that refuses introspection: a quiet note, the syntax still checked, and it still sends', async () => {
    await choose('legacy', 'receive');
    await page.getByText('Schema not available').waitFor();
    await page.getByText('GraphQL introspection is not allowed').waitFor();
    await typeDocument('{ hello(');
    await problems()
      .getByText(/Syntax Error/)
      .waitFor();
    await ui.shot('g5-no-schema');
    await typeDocument('{ hello }');
    await untilPage('no problems left', async () => (await problems().count()) === 0);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await response().getByText('HTTP 200').waitFor();
    await response().getByLabel('Response body').getByText('world').first().waitFor();
    ui.assertClean();
  });

  test('SOAP, and GraphQL operations without a document, have no editor and ask for no schema', async () => {
    await choose('people', 'sync');
    await page.getByLabel('Body (JSON)').waitFor();
    assert.equal(await editor().count(), 0);
    await choose('ledger', 'receive');
    await page.getByLabel('Body (JSON)').waitFor();
    assert.equal(await editor().count(), 0);
    assert.equal(fetched.filter((path) => path.endsWith('/ledger/schema')).length, 0);
    // Back to people: its schema was read once for the whole visit.
    await choose('people', 'send');
    await page.getByText('Checked against the integration’s schema').waitFor();
    assert.equal(fetched.filter((path) => path === '/api/v1/integrations/people/schema').length, 1);
    ui.assertClean();
  });
});
