import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { facetProblem, maxPatternText, readFacets } from '../src/connectors/soap/facets.ts';
import type { XmlElement } from '../src/connectors/soap/xml-reader.ts';
import { readXmlTree } from '../src/connectors/soap/xml-reader.ts';

/** The restriction element of `<xs:restriction …>children</xs:restriction>`. */
function restriction(children: string): XmlElement {
  return readXmlTree(`<xs:restriction xmlns:xs="http://www.w3.org/2001/XMLSchema" base="xs:string">${children}</xs:restriction>`);
}

describe('facets: read from restrictions, checked against values', () => {
  test('lengths count characters (code points), bytes of binary types, or items', () => {
    const facets = readFacets(restriction('<xs:minLength value="2"/><xs:maxLength value="3"/>'), undefined);
    assert.ok(facets);
    assert.equal(facetProblem(facets, 'string', 'a'), 'must be at least 2 characters long (minLength)');
    assert.equal(facetProblem(facets, 'string', '😀😀😀'), undefined);
    assert.equal(facetProblem(facets, 'string', 'abcd'), 'must be at most 3 characters long (maxLength)');
    assert.equal(facetProblem(facets, 'hexBinary', 'a1b2c3d4'), 'must be at most 3 bytes long (maxLength)');
    assert.equal(facetProblem(facets, 'base64Binary', 'YWJj'), undefined);
    assert.equal(facetProblem(facets, 'anySimpleType', '', 4), 'must be at most 3 items long (maxLength)');
  });

  test('a restriction of a restriction keeps the narrower bound and every step’s patterns', () => {
    const base = readFacets(restriction('<xs:maxInclusive value="10"/><xs:pattern value="\\d+"/>'), undefined);
    const narrower = readFacets(
      restriction('<xs:maxInclusive value="20"/><xs:minExclusive value="0"/><xs:pattern value="[13579]+"/>'),
      base,
    );
    assert.ok(narrower);
    assert.equal(narrower.maxInclusive, 10);
    assert.equal(facetProblem(narrower, 'int', '11'), 'must be at most 10 (maxInclusive)');
    assert.equal(facetProblem(narrower, 'int', '0'), 'must match the pattern [13579]+ (pattern)');
    assert.equal(facetProblem(narrower, 'int', '7'), undefined);
    // Patterns of one step are alternatives.
    const either = readFacets(restriction('<xs:pattern value="a+"/><xs:pattern value="b+"/>'), undefined);
    assert.ok(either);
    assert.equal(facetProblem(either, 'string', 'bbb'), undefined);
    assert.equal(facetProblem(either, 'string', 'ab'), 'must match the pattern a+ or b+ (pattern)');
  });

  test('digits count without the sign, leading zeros or trailing fraction zeros', () => {
    const facets = readFacets(restriction('<xs:totalDigits value="4"/><xs:fractionDigits value="2"/>'), undefined);
    assert.ok(facets);
    assert.equal(facetProblem(facets, 'decimal', '-0012.30'), undefined);
    assert.equal(facetProblem(facets, 'decimal', '12.345'), 'must have at most 4 digits (totalDigits)');
    assert.equal(facetProblem(facets, 'decimal', '1.234'), 'must have at most 2 digits after the point (fractionDigits)');
  });

  test('patterns that could backtrack without end, or that JavaScript cannot express, are not checked', () => {
    const hostile = 'a'.repeat(5000);
    for (const pattern of ['(a+)+b', '(a|aa)*b', '\\d*\\d*\\d*x', '[a-z-[aeiou]]+', '\\i\\c*']) {
      const facets = readFacets(restriction(`<xs:pattern value="${pattern}"/>`), undefined);
      assert.equal(facets?.patterns, undefined, pattern);
    }
    // A checked pattern is only applied to text of up to maxPatternText characters.
    const facets = readFacets(restriction('<xs:pattern value="[A-Z]+"/>'), undefined);
    assert.ok(facets);
    assert.equal(facetProblem(facets, 'string', hostile.slice(0, maxPatternText)), 'must match the pattern [A-Z]+ (pattern)');
    assert.equal(facetProblem(facets, 'string', hostile), undefined);
  });
});
