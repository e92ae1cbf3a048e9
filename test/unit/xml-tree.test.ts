import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readXml, readXmlTree, type XmlElement, xsiTypeOf } from '../../src/connectors/soap/xml-reader.ts';
import { apiError } from '../support/assertions.ts';

/** The element at `path` (child indexes) below `root`. */
const at = (root: XmlElement, ...path: number[]) => path.reduce((node, i) => node.children[i], root);

describe('readXmlTree: documents read namespace-aware (WSDL and XML Schema documents)', () => {
  test('names resolve through the declarations in scope: default, prefixed, redeclared, undeclared, xml', () => {
    const root = readXmlTree(
      '<?xml version="1.0"?><!-- c --><d xmlns="urn:d" xmlns:p="urn:p"><p:a n="1" p:q="2"><b/><p:c xmlns:p="urn:q" xmlns=""><e/></p:c></p:a><z:u xml:lang="en"/></d>',
    );
    assert.deepEqual([root.ns, root.local], ['urn:d', 'd']);
    const a = at(root, 0);
    assert.deepEqual([a.ns, a.local, { ...a.attributes }], ['urn:p', 'a', { n: '1', 'p:q': '2' }]);
    assert.equal(at(root, 0, 0).ns, 'urn:d');
    assert.deepEqual([at(root, 0, 1).ns, at(root, 0, 1, 0).ns], ['urn:q', '']);
    // A prefix nothing declares resolves to '' (the names that matter are checked where they are used).
    assert.deepEqual([at(root, 1).ns, at(root, 1).local], ['', 'u']);
    assert.equal(at(root, 1).scope.get('xml'), 'http://www.w3.org/XML/1998/namespace');
    // Scopes are shared until a tag declares something, and parents are linked.
    assert.equal(at(root, 0).scope, root.scope);
    assert.notEqual(at(root, 0, 1).scope, root.scope);
    assert.equal(at(root, 0, 1, 0).parent, at(root, 0, 1));
  });

  test('text: references decoded, CDATA as it is, whitespace between elements left out', () => {
    const root = readXmlTree('<a>\n  <b>x &amp; &#x41;<![CDATA[<y>]]></b>\r\n  <c>  </c></a>');
    assert.equal(root.text, '');
    assert.equal(at(root, 0).text, 'x & A<y>');
    assert.equal(at(root, 1).text, '');
    assert.equal(readXmlTree('<a v="1&#10;2&lt;"/>').attributes.v, '1\n2<');
  });

  test('an attribute named __proto__ is an own attribute and reaches no prototype', () => {
    const root = readXmlTree('<a __proto__="x" constructor="y"/>');
    assert.deepEqual(Object.entries(root.attributes), [
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
    assert.equal(Object.getPrototypeOf(root.attributes), Object.prototype);
  });

  test('what is not well-formed, or declares a DTD, is refused with a reason', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /no root element/],
      ['<a><b></a>', /expected <\/b> but found <\/a>/],
      ['<a/><b/>', /exactly one root element/],
      ['<a x="1" x="2"/>', /'x' is repeated/],
      ['<a xmlns:p="u" xmlns:p="v"/>', /'xmlns:p' is repeated/],
      ['<a x=1/>', /not quoted/],
      ['<a>&</a>', /opens no reference/],
      ['x<a/>', /text outside the root element/],
      ['<a><!-- open</a>', /comment is not closed/],
      ['<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>', /DTD/],
    ];
    for (const [text, reason] of cases) {
      const error = apiError(() => readXmlTree(text), 'upstream_invalid_response');
      assert.match(error.message, reason, text);
    }
  });
});

describe('readXmlTree: the bounds of docs/limits.md#upstreams, counted as it reads', () => {
  test('nesting, attributes of one element, elements and attributes, distinct names', () => {
    const cases: Array<[string, RegExp]> = [
      [`${'<a>'.repeat(257)}${'</a>'.repeat(257)}`, /deeper than 256 levels/],
      [`<a ${Array.from({ length: 257 }, (_, i) => `x${i}="1"`).join(' ')}/>`, /more than 256 attributes/],
      [`<a>${'<b/>'.repeat(1_000_000)}</a>`, /more than 1000000 elements and attributes/],
      [`<a>${Array.from({ length: 10_001 }, (_, i) => `<n${i}/>`).join('')}</a>`, /more than 10000 distinct/],
    ];
    for (const [text, reason] of cases) {
      assert.match(apiError(() => readXmlTree(text), 'upstream_invalid_response').message, reason);
    }
    // Just within each bound.
    readXmlTree(`${'<a>'.repeat(256)}${'</a>'.repeat(256)}`);
    readXmlTree(`<a ${Array.from({ length: 256 }, (_, i) => `x${i}="1"`).join(' ')}/>`);
  });
});

describe('readXml: the xsi:type of an answer element, resolved where it is written', () => {
  const xsi = 'http://www.w3.org/2001/XMLSchema-instance';

  test('by the prefixes in scope, declared before or after it on the same tag, or on an ancestor', () => {
    const read = readXml(
      `<r xmlns:t="urn:t"><a i:type="t:Circle" xmlns:i="${xsi}"/><b xmlns:i="${xsi}" xmlns:u="urn:u"><c i:type="u:Square">1</c></b></r>`,
    ) as { r: { a: object; b: { c: object } } };
    assert.deepEqual(xsiTypeOf(read.r.a), { ns: 'urn:t', local: 'Circle' });
    assert.deepEqual(xsiTypeOf(read.r.b.c), { ns: 'urn:u', local: 'Square' });
    assert.equal(xsiTypeOf(read.r.b), undefined);
  });

  test('a type attribute in another namespace, or a value whose prefix nothing declares, is no xsi:type', () => {
    const read = readXml(`<r xmlns:i="${xsi}" xmlns:p="urn:p"><a p:type="i:x"/><b i:type="nowhere:T"/><c type="T"/></r>`) as {
      r: Record<string, object>;
    };
    assert.equal(xsiTypeOf(read.r.a), undefined);
    assert.equal(xsiTypeOf(read.r.b), undefined);
    assert.equal(xsiTypeOf(read.r.c), undefined);
  });
});
