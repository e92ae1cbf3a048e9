import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DOMParser, type Element } from '@xmldom/xmldom';
import type { WsSecurityOptions } from '../../src/connectors/soap/wsse/config.ts';
import { describeWsSecurity } from '../../src/connectors/soap/wsse/material.ts';
import { wsSecurityProblems } from '../../src/connectors/soap/wsse/problems.ts';
import { applyWsSecurity } from '../../src/connectors/soap/wsse/security-header.ts';
import { apiError } from '../support/assertions.ts';
import {
  compileJavaVerifier,
  makeTestKeys,
  opensslCertificateFacts,
  type Pem,
  pythonPasswordDigest,
  type TestKeys,
  xmlsecVerify,
} from '../support/wsse-tools.ts';

const soap11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const soap12 = 'http://www.w3.org/2003/05/soap-envelope';
const wsse = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd';
const wsu = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd';
const ds = 'http://www.w3.org/2000/09/xmldsig#';

const envelope11 = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${soap11}"><soap:Body><m:GetPrice xmlns:m="urn:shop"><m:item>tea &amp; cake</m:item></m:GetPrice></soap:Body></soap:Envelope>`;
// SOAP's namespace as the default one: the Security block must bring its own prefix for mustUnderstand.
const envelope12 = `<Envelope xmlns="${soap12}"><Body><GetPrice xmlns="urn:shop"><item>tea</item></GetPrice></Body></Envelope>`;
const envelopeWithHeader = `<s:Envelope xmlns:s="${soap11}"><s:Header><h:Trace xmlns:h="urn:trace">t-1</h:Trace></s:Header><s:Body><m:Ping xmlns:m="urn:shop"/></s:Body></s:Envelope>`;

// Namespaces declared on the Envelope and used in the Body (as WSDL-mode writers do), one unused; a default namespace,
// attributes out of order, xml:lang, a comment, CDATA, character references and whitespace: exclusive C14N must
// render all of these the same way in our signer and in both verifiers.
const trickyEnvelope =
  `<?xml version="1.0" encoding="UTF-8"?>\n<soapenv:Envelope xmlns:soapenv="${soap11}" xmlns:m="urn:shop" xmlns:unused="urn:unused">\n` +
  '  <soapenv:Header/>\n  <soapenv:Body>\n' +
  '    <m:Order b="2" a="1" xml:lang="de"><!-- note --><item xmlns="urn:item" m:code="x&amp;y">' +
  '<![CDATA[<tea> & cake]]> &#x20AC;&#9; </item>\n      <empty></empty>\n    </m:Order>\n  </soapenv:Body>\n</soapenv:Envelope>\n';

let keys: TestKeys;
let javaVerify: ReturnType<typeof compileJavaVerifier>;
before(() => {
  keys = makeTestKeys();
  javaVerify = compileJavaVerifier(keys.dir);
});
after(() => keys?.remove());

const parse = (xml: string) => new DOMParser().parseFromString(xml, 'text/xml');
const one = (xml: string, namespace: string, name: string): Element => {
  const found = parse(xml).getElementsByTagNameNS(namespace, name);
  assert.equal(found.length, 1, `one ${name}`);
  return found[0];
};
const texts = (xml: string, namespace: string, name: string) =>
  Array.from(parse(xml).getElementsByTagNameNS(namespace, name)).map((element) => element.textContent ?? '');

function signature(pem: Pem, extra: Partial<NonNullable<WsSecurityOptions['signature']>> = {}): WsSecurityOptions['signature'] {
  return { certificate: pem.certificate, private_key: pem.privateKey, ...extra };
}

/** Every wsu:Id in the message, and the URIs the Signature's References point at. */
function idsAndReferences(xml: string): { ids: string[]; references: string[] } {
  const document = parse(xml);
  const ids = Array.from(document.getElementsByTagName('*'))
    .map((element) => element.getAttributeNS(wsu, 'Id'))
    .filter((id): id is string => Boolean(id));
  const references = Array.from(document.getElementsByTagNameNS(ds, 'Reference')).map((r) => r.getAttribute('URI') ?? '');
  return { ids, references };
}

describe('signatures xmlsec1 and the JDK accept', () => {
  const cases: {
    name: string;
    envelope: string;
    options: () => WsSecurityOptions;
    pem: () => Pem;
    signed: number;
    sha1?: boolean;
  }[] = [
    {
      name: 'RSA-SHA256, SOAP 1.1, body and timestamp by default',
      envelope: envelope11,
      options: () => ({ timestamp: {}, signature: signature(keys.rsa) }),
      pem: () => keys.rsa,
      signed: 2,
    },
    {
      name: 'RSA-SHA1 with SHA-1 digests',
      envelope: envelope11,
      options: () => ({
        timestamp: {},
        signature: signature(keys.rsa, { signature_algorithm: 'rsa-sha1', digest_algorithm: 'sha1' }),
      }),
      pem: () => keys.rsa,
      signed: 2,
      sha1: true,
    },
    {
      name: 'ECDSA-SHA256 with a P-256 key',
      envelope: envelope11,
      options: () => ({ timestamp: {}, signature: signature(keys.ec, { signature_algorithm: 'ecdsa-sha256' }) }),
      pem: () => keys.ec,
      signed: 2,
    },
    {
      name: 'SOAP 1.2 with SOAP as the default namespace',
      envelope: envelope12,
      options: () => ({ timestamp: {}, signature: signature(keys.rsa) }),
      pem: () => keys.rsa,
      signed: 2,
    },
    {
      name: 'body, timestamp and username_token, issuer/serial reference',
      envelope: envelope11,
      options: () => ({
        timestamp: { ttl_seconds: 60 },
        username_token: { username: 'alice', password: 'pw', password_type: 'digest' },
        signature: signature(keys.rsa, { sign: ['body', 'timestamp', 'username_token'], key_reference: 'issuer_serial' }),
      }),
      pem: () => keys.rsa,
      signed: 3,
    },
    {
      name: 'an envelope that already had a Header, subject key identifier reference, EC',
      envelope: envelopeWithHeader,
      options: () => ({
        timestamp: {},
        signature: signature(keys.ec, { signature_algorithm: 'ecdsa-sha256', key_reference: 'subject_key_identifier' }),
      }),
      pem: () => keys.ec,
      signed: 2,
    },
    {
      name: 'a payload that tests canonicalisation: inherited prefixes, default namespace, comments, CDATA, entities',
      envelope: trickyEnvelope,
      options: () => ({ timestamp: {}, signature: signature(keys.rsa) }),
      pem: () => keys.rsa,
      signed: 2,
    },
    {
      name: 'an encrypted key with its password, body only',
      envelope: envelope12,
      options: () => ({
        signature: {
          certificate: keys.rsa.certificate,
          private_key: keys.encryptedRsaKey,
          private_key_password: keys.encryptedPassword,
        },
      }),
      pem: () => keys.rsa,
      signed: 1,
    },
  ];
  for (const { name, envelope, options, pem, signed, sha1 } of cases) {
    test(name, () => {
      const message = applyWsSecurity(envelope, options());
      const verdict = xmlsecVerify(message, pem().certificatePath);
      assert.ok(verdict.ok, verdict.output);
      assert.match(verdict.output, new RegExp(`SignedInfo References \\(ok/all\\): ${signed}/${signed}`));
      // The JDK also follows the SecurityTokenReference to the certificate, as a WS-Security receiver does.
      const jdk = javaVerify(message, pem().certificatePath, sha1);
      assert.ok(jdk.ok, jdk.output);
      assert.equal(jdk.output.match(/: valid$/gm)?.length, signed, jdk.output);

      // Each signed element has its own wsu:Id, and the references point at exactly those.
      const { ids, references } = idsAndReferences(message);
      assert.equal(new Set(ids).size, ids.length, `distinct ids: ${ids}`);
      assert.equal(references.length, signed);
      assert.equal(new Set(references).size, signed);
      for (const reference of references) assert.ok(ids.includes(reference.slice(1)), reference);
      assert.equal(
        one(message, ds, 'CanonicalizationMethod').getAttribute('Algorithm'),
        'http://www.w3.org/2001/10/xml-exc-c14n#',
      );
    });
  }

  test('both refuse the message once the Body is changed after signing', () => {
    const message = applyWsSecurity(envelope11, { timestamp: {}, signature: signature(keys.rsa) });
    assert.ok(xmlsecVerify(message, keys.rsa.certificatePath).ok);
    assert.ok(javaVerify(message, keys.rsa.certificatePath).ok);
    const tampered = message.replace('tea &amp; cake', 'tea &amp; cakes');
    assert.notEqual(tampered, message);
    const verdict = xmlsecVerify(tampered, keys.rsa.certificatePath);
    assert.equal(verdict.ok, false, verdict.output);
    assert.match(verdict.output, /data and digest do not match/);
    const jdk = javaVerify(tampered, keys.rsa.certificatePath);
    assert.equal(jdk.ok, false, jdk.output);
    assert.match(jdk.output, /reference Body: INVALID/);
  });

  test('the JDK refuses a key reference that names another certificate', () => {
    for (const key_reference of ['binary_security_token', 'issuer_serial', 'subject_key_identifier'] as const) {
      const message = applyWsSecurity(envelope11, { signature: signature(keys.rsa, { key_reference }) });
      const jdk = javaVerify(message, keys.otherRsa.certificatePath);
      assert.equal(jdk.ok, false, jdk.output);
      assert.match(jdk.output, /REFUSED/);
    }
  });

  test('a payload that binds wsu to another namespace keeps its meaning', () => {
    const envelope = `<s:Envelope xmlns:s="${soap11}" xmlns:wsu="urn:not-wsu"><s:Body><m:X xmlns:m="urn:m" wsu:flag="kept"/></s:Body></s:Envelope>`;
    const message = applyWsSecurity(envelope, { timestamp: {}, signature: signature(keys.rsa) });
    assert.equal(one(message, 'urn:m', 'X').getAttributeNS('urn:not-wsu', 'flag'), 'kept');
    assert.ok(one(message, soap11, 'Body').getAttributeNS(wsu, 'Id'));
    assert.ok(xmlsecVerify(message, keys.rsa.certificatePath).ok);
    assert.ok(javaVerify(message, keys.rsa.certificatePath).ok);
  });

  test('xmlsec1 refuses a timestamp moved forward and a signature checked with another key', () => {
    const message = applyWsSecurity(envelope11, { timestamp: {}, signature: signature(keys.rsa) });
    const expires = texts(message, wsu, 'Expires')[0];
    assert.equal(xmlsecVerify(message.replace(expires, '2099-01-01T00:00:00.000Z'), keys.rsa.certificatePath).ok, false);
    assert.equal(xmlsecVerify(message, keys.otherRsa.certificatePath).ok, false);
  });
});

describe('the key references say what openssl says of the certificate', () => {
  test('binary_security_token carries the certificate and the reference points at it', () => {
    const facts = opensslCertificateFacts(keys.rsa.certificatePath);
    const message = applyWsSecurity(envelope11, { signature: signature(keys.rsa) });
    const token = one(message, wsse, 'BinarySecurityToken');
    assert.equal(token.textContent, facts.der);
    assert.equal(
      token.getAttribute('ValueType'),
      'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3',
    );
    const reference = one(message, wsse, 'Reference');
    assert.equal(reference.getAttribute('URI'), `#${token.getAttributeNS(wsu, 'Id')}`);
    // The token comes before the Signature that refers to it.
    const security = one(message, wsse, 'Security');
    const order = Array.from(security.childNodes).map((node) => (node as Element).localName);
    assert.ok(order.indexOf('BinarySecurityToken') < order.indexOf('Signature'), String(order));
  });

  test('issuer_serial names the issuer in RFC 2253 and the serial in decimal', () => {
    const facts = opensslCertificateFacts(keys.rsa.certificatePath);
    const message = applyWsSecurity(envelope11, { signature: signature(keys.rsa, { key_reference: 'issuer_serial' }) });
    assert.equal(one(message, ds, 'X509IssuerName').textContent, facts.issuer);
    assert.match(facts.issuer, /Example\\, Inc\./);
    assert.ok(javaVerify(message, keys.rsa.certificatePath).ok);
    assert.equal(one(message, ds, 'X509SerialNumber').textContent, facts.serial);
    assert.equal(parse(message).getElementsByTagNameNS(wsse, 'BinarySecurityToken').length, 0);
  });

  test('issuer_serial with a multi-valued RDN, its values in any order', () => {
    const facts = opensslCertificateFacts(keys.multiValued.certificatePath);
    const message = applyWsSecurity(envelope11, {
      signature: signature(keys.multiValued, { signature_algorithm: 'ecdsa-sha256', key_reference: 'issuer_serial' }),
    });
    const rdns = (name: string) => name.split(',').map((rdn) => rdn.split('+').sort().join('+'));
    assert.deepEqual(rdns(one(message, ds, 'X509IssuerName').textContent ?? ''), rdns(facts.issuer));
    assert.deepEqual(rdns(facts.issuer), ['CN=a+UID=b', 'O=x']);
    // The JDK parses the name as an X500Principal and compares it with the certificate's issuer.
    const jdk = javaVerify(message, keys.multiValued.certificatePath);
    assert.ok(jdk.ok, jdk.output);
  });

  test('subject_key_identifier is the certificate’s SKI extension', () => {
    const facts = opensslCertificateFacts(keys.ec.certificatePath);
    const message = applyWsSecurity(envelope11, {
      signature: signature(keys.ec, { signature_algorithm: 'ecdsa-sha256', key_reference: 'subject_key_identifier' }),
    });
    assert.equal(one(message, wsse, 'KeyIdentifier').textContent, facts.ski);
  });

  test('a certificate without the SKI extension gets the SHA-1 of its key bits, as openssl’s subjectKeyIdentifier=hash', () => {
    // The same RSA key in a v3 certificate whose SKI openssl computed with RFC 5280's method 1.
    const facts = opensslCertificateFacts(keys.rsa.certificatePath);
    const message = applyWsSecurity(envelope11, {
      signature: signature(keys.v1Rsa, { key_reference: 'subject_key_identifier' }),
    });
    assert.equal(one(message, wsse, 'KeyIdentifier').textContent, facts.ski);
    assert.ok(xmlsecVerify(message, keys.v1Rsa.certificatePath).ok);
    const jdk = javaVerify(message, keys.v1Rsa.certificatePath);
    assert.ok(jdk.ok, jdk.output);
  });
});

describe('the header block', () => {
  const clock = new Date('2026-03-04T05:06:07.089Z');

  test('mustUnderstand="1" in the envelope’s SOAP namespace, 1.1 and 1.2; other header blocks kept', () => {
    for (const [envelope, namespace] of [
      [envelope11, soap11],
      [envelope12, soap12],
      [envelopeWithHeader, soap11],
    ]) {
      const message = applyWsSecurity(envelope, { timestamp: {} });
      const security = one(message, wsse, 'Security');
      assert.equal(security.getAttributeNS(namespace, 'mustUnderstand'), '1');
      assert.equal(parse(message).getElementsByTagNameNS(namespace, 'Header').length, 1);
      const parent = security.parentNode as Element;
      assert.deepEqual([parent.namespaceURI, parent.localName], [namespace, 'Header']);
    }
    assert.equal(texts(applyWsSecurity(envelopeWithHeader, { timestamp: {} }), 'urn:trace', 'Trace')[0], 't-1');
  });

  test('the timestamp runs from the injected clock for ttl_seconds', () => {
    const message = applyWsSecurity(envelope11, { timestamp: { ttl_seconds: 90 } }, { now: () => clock });
    assert.deepEqual(texts(message, wsu, 'Created'), ['2026-03-04T05:06:07.089Z']);
    assert.deepEqual(texts(message, wsu, 'Expires'), ['2026-03-04T05:07:37.089Z']);
  });

  test('a PasswordDigest Python recomputes from the message’s Nonce and Created', () => {
    const options: WsSecurityOptions = { username_token: { username: 'alice', password: 'pässword', password_type: 'digest' } };
    const first = applyWsSecurity(envelope11, options, { now: () => clock });
    const second = applyWsSecurity(envelope11, options, { now: () => clock });
    for (const message of [first, second]) {
      const [nonce] = texts(message, wsse, 'Nonce');
      const [created] = texts(message, wsu, 'Created');
      assert.equal(created, clock.toISOString());
      assert.equal(Buffer.from(nonce, 'base64').length, 16);
      const password = one(message, wsse, 'Password');
      assert.match(password.getAttribute('Type') ?? '', /#PasswordDigest$/);
      assert.equal(password.textContent, pythonPasswordDigest(nonce, created, 'pässword'));
    }
    assert.notEqual(texts(first, wsse, 'Nonce')[0], texts(second, wsse, 'Nonce')[0]);
    assert.notEqual(texts(first, wsse, 'Password')[0], texts(second, wsse, 'Password')[0]);
  });

  test('PasswordText sends the password itself, with nonce and created only when asked', () => {
    const plain = applyWsSecurity(envelope11, { username_token: { username: 'bob', password: 'a<b' } });
    assert.equal(one(plain, wsse, 'Password').textContent, 'a<b');
    assert.match(one(plain, wsse, 'Password').getAttribute('Type') ?? '', /#PasswordText$/);
    assert.equal(texts(plain, wsse, 'Nonce').length, 0);
    const withBoth = applyWsSecurity(envelope11, {
      username_token: { username: 'bob', password: 'p', nonce: true, created: true },
    });
    assert.equal(texts(withBoth, wsse, 'Nonce').length, 1);
    assert.equal(texts(withBoth, wsu, 'Created').length, 1);
  });

  test('ids stay distinct even when the randomness repeats itself', () => {
    const stuck = (size: number) => Buffer.alloc(size, 7);
    const message = applyWsSecurity(
      envelope11,
      {
        timestamp: {},
        username_token: { username: 'a', password: 'b' },
        signature: signature(keys.rsa, { sign: ['body', 'timestamp', 'username_token'] }),
      },
      { randomBytes: stuck },
    );
    const { ids } = idsAndReferences(message);
    assert.equal(ids.length, 4);
    assert.equal(new Set(ids).size, 4);
    assert.ok(xmlsecVerify(message, keys.rsa.certificatePath).ok);
  });

  test('what is not a SOAP envelope is refused', () => {
    const options: WsSecurityOptions = { timestamp: {} };
    for (const text of [
      '<x/>',
      'not xml',
      `<soap:Envelope xmlns:soap="${soap11}"><soap:Header/></soap:Envelope>`,
      `<!DOCTYPE d [<!ENTITY e "x">]><soap:Envelope xmlns:soap="${soap11}"><soap:Body>&e;</soap:Body></soap:Envelope>`,
      applyWsSecurity(envelope11, options),
    ]) {
      apiError(() => applyWsSecurity(text, options), 'invalid_soap_params');
    }
  });
});

describe('describeWsSecurity, what test reports', () => {
  test('the parts configured and the certificate’s subject and expiry as openssl reads them', () => {
    const facts = opensslCertificateFacts(keys.rsa.certificatePath);
    assert.deepEqual(
      describeWsSecurity({ username_token: { username: 'a', password: 'b' }, timestamp: {}, signature: signature(keys.rsa) }),
      { username_token: true, timestamp: true, signature: { subject: facts.subject, not_after: facts.notAfter } },
    );
    assert.deepEqual(describeWsSecurity({ timestamp: {} }), { username_token: false, timestamp: true, signature: null });
  });
});

describe('wsSecurityProblems', () => {
  const at = (options: WsSecurityOptions) => wsSecurityProblems(options).map((problem) => problem.path);
  const base = 'config.ws_security.signature';

  test('usable options have none', () => {
    assert.deepEqual(wsSecurityProblems({ timestamp: {}, signature: signature(keys.rsa) }), []);
    assert.deepEqual(wsSecurityProblems({ signature: signature(keys.ec, { signature_algorithm: 'ecdsa-sha256' }) }), []);
  });

  test('PEM that does not parse', () => {
    assert.deepEqual(at({ signature: { certificate: 'nope', private_key: keys.rsa.privateKey } }), [`${base}.certificate`]);
    // Cut short: the DER's lengths no longer add up, wherever the random key's bytes fall (overwriting a run of
    // letters could land in the signature's bytes, which parsing does not check).
    const lines = keys.rsa.certificate.trim().split('\n');
    const broken = [lines[0], lines[1], lines[2], lines.at(-1)].join('\n');
    assert.deepEqual(at({ signature: { certificate: broken, private_key: keys.rsa.privateKey } }), [`${base}.certificate`]);
    assert.deepEqual(at({ signature: { certificate: keys.rsa.certificate, private_key: 'nope' } }), [`${base}.private_key`]);
  });

  test('a key that does not belong to the certificate', () => {
    assert.deepEqual(at({ signature: { certificate: keys.rsa.certificate, private_key: keys.otherRsa.privateKey } }), [
      `${base}.private_key`,
    ]);
  });

  test('an expired certificate', () => {
    const problems = wsSecurityProblems({
      signature: { certificate: keys.expiredCertificate, private_key: keys.rsa.privateKey },
    });
    assert.deepEqual(problems, [
      { path: `${base}.certificate`, message: 'The certificate expired on 2020-02-01T00:00:00.000Z.' },
    ]);
  });

  test('an encrypted key without its password, or with a wrong one', () => {
    const encrypted = { certificate: keys.rsa.certificate, private_key: keys.encryptedRsaKey };
    assert.deepEqual(at({ signature: encrypted }), [`${base}.private_key_password`]);
    assert.deepEqual(at({ signature: { ...encrypted, private_key_password: 'wrong' } }), [`${base}.private_key_password`]);
    assert.deepEqual(at({ signature: { ...encrypted, private_key_password: keys.encryptedPassword } }), []);
  });

  test('an algorithm for the other kind of key', () => {
    assert.deepEqual(at({ signature: signature(keys.ec) }), [`${base}.signature_algorithm`]);
    assert.deepEqual(at({ signature: signature(keys.rsa, { signature_algorithm: 'ecdsa-sha256' }) }), [
      `${base}.signature_algorithm`,
    ]);
  });

  test('a signed part that is not configured, and nothing configured at all', () => {
    assert.deepEqual(at({ signature: signature(keys.rsa, { sign: ['body', 'timestamp'] }) }), [`${base}.sign`]);
    assert.deepEqual(at({ timestamp: {}, signature: signature(keys.rsa, { sign: ['username_token'] }) }), [`${base}.sign`]);
    assert.deepEqual(at({}), ['config.ws_security']);
  });

  test('applyWsSecurity refuses what wsSecurityProblems reports', () => {
    const error = apiError(() => applyWsSecurity(envelope11, { signature: signature(keys.ec) }), 'integration_misconfigured');
    assert.deepEqual(error.details?.issues, wsSecurityProblems({ signature: signature(keys.ec) }));
  });
});
