import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OAuth2ClientCredentials } from '../../src/credentials/oauth2.ts';
import { OAuth2Sources } from '../../src/credentials/oauth2-sources.ts';

const create = () =>
  new OAuth2ClientCredentials({
    tokenUrl: 'https://auth.example/token',
    clientId: 'c',
    clientSecret: 's',
    clientAuthentication: 'client_secret_basic',
  });

test('one source per integration version: the same version gets the same source back', () => {
  const sources = new OAuth2Sources();
  const first = sources.get({ tenantId: 't', integrationId: 'i', version: 1 }, create);
  assert.equal(sources.get({ tenantId: 't', integrationId: 'i', version: 1 }, create), first);
  assert.notEqual(sources.get({ tenantId: 'u', integrationId: 'i', version: 1 }, create), first, 'another tenant');
  assert.notEqual(sources.get({ tenantId: 't', integrationId: 'j', version: 1 }, create), first, 'another integration');
});

test('a changed integration gets a fresh source and its old one is dropped', () => {
  const sources = new OAuth2Sources();
  const old = sources.get({ tenantId: 't', integrationId: 'i', version: 1 }, create);
  const changed = sources.get({ tenantId: 't', integrationId: 'i', version: 2 }, create);
  assert.notEqual(changed, old);
  assert.equal(sources.size, 1);
  assert.equal(sources.get({ tenantId: 't', integrationId: 'i', version: 2 }, create), changed);
});

test('an older version still running gets a source of its own, and the newer one is kept', () => {
  const sources = new OAuth2Sources();
  const newer = sources.get({ tenantId: 't', integrationId: 'i', version: 3 }, create);
  const older = sources.get({ tenantId: 't', integrationId: 'i', version: 2 }, create);
  assert.notEqual(older, newer);
  assert.equal(sources.get({ tenantId: 't', integrationId: 'i', version: 3 }, create), newer);
  assert.equal(sources.size, 1);
});

test('bounded: past maxEntries the least recently used integration is dropped', () => {
  const sources = new OAuth2Sources({ maxEntries: 2 });
  const a = sources.get({ tenantId: 't', integrationId: 'a', version: 1 }, create);
  const b = sources.get({ tenantId: 't', integrationId: 'b', version: 1 }, create);
  assert.equal(sources.get({ tenantId: 't', integrationId: 'a', version: 1 }, create), a, 'a is used again');
  sources.get({ tenantId: 't', integrationId: 'c', version: 1 }, create);
  assert.equal(sources.size, 2);
  assert.equal(sources.get({ tenantId: 't', integrationId: 'a', version: 1 }, create), a, 'a was kept');
  assert.notEqual(sources.get({ tenantId: 't', integrationId: 'b', version: 1 }, create), b, 'b was dropped');
});

test('forget() drops an integration changed or deleted on this instance', () => {
  const sources = new OAuth2Sources();
  const first = sources.get({ tenantId: 't', integrationId: 'i', version: 1 }, create);
  sources.forget('t', 'i');
  assert.equal(sources.size, 0);
  assert.notEqual(sources.get({ tenantId: 't', integrationId: 'i', version: 1 }, create), first);
});
