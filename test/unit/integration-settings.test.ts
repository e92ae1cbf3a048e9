import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { integrationView, resolveIntegration } from '../../src/connectors/integration-config.ts';
import { builtInConnectors } from '../../src/connectors/registry.ts';
import { settingsOf } from '../../src/integrations/settings.ts';
import type { StoredIntegration } from '../../src/storage/integrations.ts';

/**
 * An integration's config is read once into typed settings, defaults from its connector's `defaults` and nowhere else
 * (src/integrations/settings.ts): what the API shows as a default is what the executor, the token request and the
 * connector run with.
 */
const definitions = builtInConnectors(loadConfig({ DATABASE_URL: 'sqlite::memory:' }));
const masterKey = randomBytes(32);

const stored = (connector: string, config: Record<string, unknown>): StoredIntegration => ({
  tenant_id: 'acme',
  id: 'erp',
  name: 'ERP',
  connector,
  config,
  secrets: {},
  catalog: {},
  version: 1,
  created_at: '2026-11-29T00:00:00.000Z',
  updated_at: '2026-11-29T00:00:00.000Z',
});

describe('integration settings: one reading of the config, with the connector’s defaults', () => {
  for (const definition of definitions) {
    test(`${definition.id}: an unset timeout runs with the default the API shows; a set one wins`, () => {
      const unset = stored(definition.id, {});
      const shown = integrationView(definition, unset).config.timeout_seconds as number;
      assert.equal(shown, definition.defaults.timeout_seconds);
      const resolved = resolveIntegration(definition, unset, masterKey);
      assert.equal(resolved.settings.timeoutMs, shown * 1000);
      assert.equal(resolved.config.timeout_seconds, shown, 'the connector sees it filled in too');
      const set = resolveIntegration(definition, stored(definition.id, { timeout_seconds: 7 }), masterKey);
      assert.equal(set.settings.timeoutMs, 7000);
    });
  }

  test('the built-in defaults: GraphQL 30 s, SOAP 60 s', () => {
    assert.deepEqual(
      definitions.map((d) => [d.id, d.defaults.timeout_seconds]),
      [
        ['graphql-1.0.0', 30],
        ['soap-1.0.0', 60],
      ],
    );
  });

  test('retry, max_concurrency and tls: each missing field at its default, read once and frozen', () => {
    const settings = settingsOf({ timeout_seconds: 30 }, { retry: { max_attempts: 5 }, max_concurrency: 4 });
    assert.deepEqual(settings, {
      timeoutMs: 30_000,
      retry: { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 10_000 },
      maxConcurrency: 4,
      tls: undefined,
    });
    assert.ok(Object.isFrozen(settings));
    assert.equal(settingsOf({ timeout_seconds: 60 }, {}).maxConcurrency, undefined);
    const view = integrationView(
      definitions[0],
      stored('graphql-1.0.0', { retry: { max_attempts: 5 }, max_concurrency: 4 }),
    ).config;
    assert.deepEqual(view.retry, { max_attempts: 5, base_delay_ms: 200, max_delay_ms: 10_000 });
    assert.equal(view.max_concurrency, 4);
  });
});
