import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { RE2JS } from 're2js';
import { facetProblem, maxPatternSteps, readFacets } from '../../src/connectors/soap/facets.ts';
import type { XmlElement } from '../../src/connectors/soap/xml-reader.ts';
import { readXmlTree } from '../../src/connectors/soap/xml-reader.ts';
import { xsdToRe2 } from '../../src/connectors/soap/xsd-regex.ts';

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

  test('patterns that backtrack in JavaScript are checked by a linear-time engine, the red team’s among them', (t) => {
    const thirty = '(a|a)'.repeat(30);
    const cases: Array<[string, string, boolean]> = [
      ['(a+)+b', `${'a'.repeat(5000)}`, false],
      ['(a|aa)*b', `${'a'.repeat(1000)}b`, true],
      ['\\d*\\d*\\d*x', '1'.repeat(1500), false],
      [thirty, 'a'.repeat(31), false],
      [thirty, 'a'.repeat(30), true],
      ['(a|a){30}', 'a'.repeat(31), false],
      ['a{0,100}a{0,100}a{0,100}', `${'a'.repeat(300)}b`, false],
    ];
    let slowest = 0;
    for (const [pattern, text, fits] of cases) {
      const facets = readFacets(restriction(`<xs:pattern value="${pattern}"/>`), undefined);
      assert.ok(facets?.patterns, `${pattern} is checked`);
      const started = performance.now();
      const problem = facetProblem(facets, 'string', text);
      slowest = Math.max(slowest, performance.now() - started);
      assert.equal(problem === undefined, fits, `${pattern} against ${text.length} characters`);
    }
    t.diagnostic(`slowest check: ${slowest.toFixed(1)} ms`);
    // Repeats past RE2's 1,000, or programs past maxPatternProgram, are never applied (never slow, never refused).
    for (const pattern of ['a{0,2000}a{0,2000}a{0,2000}', 'a{0,1000}a{0,1000}a{0,1000}a{0,1000}a{0,1000}a{0,1000}']) {
      const facets = readFacets(restriction(`<xs:pattern value="${pattern}"/>`), undefined);
      assert.ok(facets);
      assert.equal(facetProblem(facets, 'string', 'b'), undefined, pattern);
    }
  });

  test('the work of one check is bounded: program size × text length, past it the value is not checked', () => {
    const facets = readFacets(restriction('<xs:pattern value="[\\p{L}\\p{N}]{1,1000}[\\p{L}\\p{N}]{1,1000}"/>'), undefined);
    assert.ok(facets?.patterns);
    const compiled = RE2JS.compile(facets.patterns[0][0]);
    const longest = Math.floor(maxPatternSteps / compiled.programSize());
    assert.equal(
      facetProblem(facets, 'string', `${'a'.repeat(longest - 1)}!`),
      'must match the pattern [\\p{L}\\p{N}]{1,1000}[\\p{L}\\p{N}]{1,1000} (pattern)',
    );
    assert.equal(facetProblem(facets, 'string', `${'a'.repeat(longest + 1)}!`), undefined, 'not checked');
  });

  test('XML Schema’s dialect: implicit anchors, literal ^ and $, \\i and \\c, class subtraction, \\s and . as XSD has them', () => {
    const check = (pattern: string, text: string) => {
      const facets = readFacets(restriction(`<xs:pattern value="${pattern}"/>`), undefined);
      assert.ok(facets?.patterns, `${pattern} is checked`);
      return facetProblem(facets, 'string', text) === undefined;
    };
    assert.equal(check('[a-z-[aeiou]]+', 'bcd'), true);
    assert.equal(check('[a-z-[aeiou]]+', 'bad'), false);
    assert.equal(check('[a-z-[^aeiou]]+', 'aei'), true, 'a subtraction of a negated class');
    assert.equal(check('\\i\\c*', 'x1-y.z'), true);
    assert.equal(check('\\i\\c*', '1x'), false);
    assert.equal(check('\\I+', '12'), true);
    assert.equal(check('^a$', '^a$'), true, '^ and $ are characters');
    assert.equal(check('^a$', 'a'), false);
    assert.equal(check('a.b', 'a\nb'), false, '. is not a line end');
    assert.equal(check('a.b', 'a€b'), true);
    assert.equal(check('a\\sb', 'a\fb'), false, '\\s is space, tab, CR and LF only');
    assert.equal(check('a\\sb', 'a\tb'), true);
    assert.equal(check('[\\w-]+', 'a-é'), true);
    assert.equal(check('[\\w-]+', 'a b'), false);
    assert.equal(check('\\d{3}', '١٢٣'), true, '\\d is any decimal digit');
    assert.equal(check('abc', 'xabcx'), false, 'anchored at both ends');
    for (const untranslatable of ['\\p{IsBasicLatin}+', '[\\p{L}-[a]]', '[^\\w]', '(a', 'a{1001}']) {
      const facets = readFacets(restriction(`<xs:pattern value="${untranslatable}"/>`), undefined);
      assert.ok(
        facets === undefined || facetProblem(facets, 'string', '\u0001') === undefined,
        `${untranslatable} is not checked`,
      );
    }
  });

  test('property: on patterns both engines read alike, the RE2 translation agrees with JavaScript', () => {
    const atom = fc.oneof(fc.constantFrom('a', 'b', 'c', '1', '\\.', '[a-c]', '[^b]', '[ab1]', '[a\\-c]', '(a|b)', '(ab|c)'));
    const quantified = fc.tuple(atom, fc.constantFrom('', '*', '+', '?', '{2}', '{1,3}', '{0,2}')).map(([a, q]) => a + q);
    const pattern = fc.array(quantified, { minLength: 1, maxLength: 6 }).map((parts) => parts.join(''));
    const text = fc.array(fc.constantFrom('a', 'b', 'c', '1', '.', '-'), { maxLength: 8 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(pattern, text, (xsd, value) => {
        const source = xsdToRe2(xsd);
        assert.ok(source, xsd);
        const oracle = new RegExp(`^(?:${xsd})$`, 'u').test(value);
        assert.equal(RE2JS.compile(source).matches(value), oracle, `${xsd} against ${JSON.stringify(value)}`);
      }),
      { numRuns: 2000 },
    );
  });

  test('property: generated hostile patterns never cost a check more than the step bound', () => {
    const piece = fc.constantFrom('a', 'a*', 'a+', '(a|a)', '(a|aa)*', '(a+)+', 'a{0,50}', '(a|a){10}', '[a-z]{1,100}');
    const pattern = fc.array(piece, { minLength: 1, maxLength: 12 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(pattern, fc.integer({ min: 1, max: 3000 }), (xsd, length) => {
        const facets = readFacets(restriction(`<xs:pattern value="${xsd}"/>`), undefined);
        const source = facets?.patterns?.[0]?.[0];
        if (source === undefined) return;
        const cost = RE2JS.compile(source).programSize() * length;
        const problem = facetProblem(facets as NonNullable<typeof facets>, 'string', `${'a'.repeat(length)}!`);
        // Checked only within the bound; a value ending in ! never fits these patterns.
        assert.equal(problem !== undefined, cost <= maxPatternSteps, `${xsd} × ${length}`);
      }),
      { numRuns: 300 },
    );
  });
});
