import { tlsWarnings } from '../egress/tls.ts';
import type { Check } from './doctor-check.ts';

/** An integration's stored config (no secrets: certificates are not secret), as doctor reads it. */
export interface StoredConfig {
  tenant_id: string;
  id: string;
  config: string;
}

const withinDays = 30;

/**
 * Each certificate an integration presents or trusts that has expired or expires within 30 days (docs/cli.md,
 * `interchange doctor`): `config.tls`'s client certificate chain and CA bundle, and WS-Security's signing certificate.
 * Named with its tenant and integration, so an operator knows what to renew.
 */
export function certificateCheck(rows: readonly StoredConfig[], now = new Date()): Check {
  const warnings = rows.flatMap((row) => {
    let config: Record<string, unknown>;
    try {
      config = JSON.parse(row.config) as Record<string, unknown>;
    } catch {
      return [];
    }
    const tls = config.tls as Record<string, unknown> | undefined;
    const signature = (config.ws_security as { signature?: { certificate?: unknown } } | undefined)?.signature;
    const found = [
      ...(tls ? tlsWarnings(tls, { now, withinDays }) : []),
      ...(typeof signature?.certificate === 'string'
        ? tlsWarnings({ client_certificate: signature.certificate }, { now, withinDays }).map((warning) =>
            warning.replace('config.tls.client_certificate', 'config.ws_security.signature.certificate'),
          )
        : []),
    ];
    return found.map((warning) => `${row.tenant_id}/${row.id}: ${warning}`);
  });
  if (warnings.length === 0)
    return { name: 'certificates', ok: true, message: `no certificate expires within ${withinDays} days` };
  return {
    name: 'certificates',
    ok: false,
    message: `${warnings.join(' ')} Renew them and set the integrations' certificates again (PATCH config.tls or config.ws_security).`,
  };
}
