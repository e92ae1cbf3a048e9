import { useState } from 'preact/hooks';
import { ErrorNotice, JsonBlock } from '../components/ui.js';
import { WsdlServices } from '../components/wsdl.js';
import { ApiFailure, request } from '../lib/api.js';
import { formatDuration } from '../lib/format.js';
import { html } from '../lib/html.js';
import { useAction } from '../lib/use-action.js';

/** Runs the connector's `test` operation against the saved integration and shows what it found. */
export function IntegrationTest({ tenant, id, disabled }) {
  const [result, setResult] = useState(null);
  const { busy, error, run } = useAction(async () => {
    setResult(null);
    const answer = await request(`/integrations/${encodeURIComponent(id)}/execute`, {
      method: 'POST',
      tenant,
      body: { operation: 'test' },
    });
    if (!answer.ok) throw new ApiFailure(answer);
    setResult({ data: answer.body.data, ms: answer.ms });
  });
  const { services, ...details } = result?.data?.details ?? {};
  const warnings = Array.isArray(details.warnings) ? details.warnings : [];
  return html`<section class="card" aria-labelledby="test-heading">
    <div class="card__header">
      <div>
        <h2 id="test-heading">Connection test</h2>
        <p class="muted">Runs the connector’s <code>test</code> operation against the saved configuration.</p>
      </div>
      <button type="button" class="button" onClick=${run} disabled=${busy || disabled}>${busy ? 'Testing…' : 'Run test'}</button>
    </div>
    <div class="test-result" aria-live="polite">
      ${error && html`<${ErrorNotice} title="The test failed" error=${error} />`}
      ${
        result?.data &&
        html`<div class="notice notice--success" role="status">
            <p class="notice__title">${result.data.message}</p>
            <p class="muted">Answered in ${formatDuration(result.ms)}.</p>
          </div>
          ${
            warnings.length > 0 &&
            html`<div class="notice notice--warning">
              <p class="notice__title">${warnings.length === 1 ? 'Warning' : `${warnings.length} warnings`}</p>
              <ul class="notice__issues">${warnings.map((w) => html`<li>${w}</li>`)}</ul>
            </div>`
          }
          <${JsonBlock} value=${details} label="Test details" />
          ${Array.isArray(services) && html`<h3 class="section-title">WSDL operations</h3><${WsdlServices} services=${services} />`}`
      }
    </div>
  </section>`;
}
