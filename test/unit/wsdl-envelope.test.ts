import assert from 'node:assert/strict';
import { test } from 'node:test';
import { xmlNamespace } from '../../src/connectors/soap/namespaces.ts';
import { type ComplexModel, simpleModelOf } from '../../src/connectors/soap/schema-model.ts';
import { writeWsdlEnvelope } from '../../src/connectors/soap/wsdl-envelope.ts';
import { compareXml } from '../support/xml-compare.ts';

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';

/** A wrapper `{urn:t}Note` whose type declares xml:lang (a `ref`), a qualified `urn:t` attribute and an unqualified one. */
const note: ComplexModel = {
  kind: 'complex',
  type: 'Note',
  open: false,
  particles: [{ name: 'text', ns: 'urn:t', required: true, repeated: false, nillable: false, model: simpleModelOf('string') }],
  attributes: [
    { name: 'lang', ns: xmlNamespace, required: false, model: simpleModelOf('language') },
    { name: 'id', ns: 'urn:t', required: false, model: simpleModelOf('int') },
    { name: 'kind', ns: '', required: false, model: simpleModelOf('string') },
  ],
};

test('attributes in the xml namespace take the xml prefix, which is never declared; others their own', () => {
  const xml = writeWsdlEnvelope({
    version: '1.1',
    layout: {
      wrapper: { ns: 'urn:t', local: 'Note' },
      model: note,
      name: 'Note',
      headers: { ...note, attributes: [], particles: [] },
    },
    params: { $attributes: { lang: 'en', id: 7, kind: 'memo' }, text: 'hi' },
  });
  assert.match(xml, / xml:lang="en"/);
  assert.doesNotMatch(xml, /xmlns:\w+="http:\/\/www\.w3\.org\/XML\/1998\/namespace"/);
  const expected =
    `<s:Envelope xmlns:s="${SOAP11}"><s:Body><t:Note xmlns:t="urn:t" xml:lang="en" t:id="7" kind="memo">` +
    '<t:text>hi</t:text></t:Note></s:Body></s:Envelope>';
  assert.deepEqual(compareXml(xml, expected), []);
});
