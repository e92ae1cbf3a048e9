import { html } from '../lib/html.js';

function typeText(param) {
  let text = param.type;
  if (param.repeated) text += '[]';
  if (!param.required) text += '?';
  return text;
}

/** One parameter and, for complex types, its children as a nested list. */
function ParamItem({ param }) {
  return html`<li>
    <code class="param__name">${param.name}</code>
    <span class="param__type">${typeText(param)}</span>
    ${param.enum && html`<span class="param__enum">one of ${param.enum.map((v) => html`<code>${v}</code> `)}</span>`}
    ${param.children?.length > 0 && html`<ul class="params">${param.children.map((c) => html`<${ParamItem} param=${c} />`)}</ul>`}
  </li>`;
}

/** `Add(intA: int, intB: int) → AddResponse`, with its parameter tree below. */
function SignatureView({ signature }) {
  const inline = signature.parameters.map((p) => `${p.name}: ${typeText(p)}`).join(', ');
  return html`<details class="signature">
    <summary>
      <code><strong>${signature.operation}</strong>(${inline})${signature.output ? ` → ${signature.output}` : ''}</code>
    </summary>
    <div class="signature__body">
      <p class="muted">Input <code>${signature.input}</code></p>
      ${
        signature.parameters.length > 0
          ? html`<ul class="params">${signature.parameters.map((p) => html`<${ParamItem} param=${p} />`)}</ul>`
          : html`<p class="muted">No parameters.</p>`
      }
      ${
        signature.headers?.length > 0 &&
        html`<p class="muted">SOAP headers</p><ul class="params">${signature.headers.map((p) => html`<${ParamItem} param=${p} />`)}</ul>`
      }
    </div>
  </details>`;
}

/** The WSDL's services, ports and operations from a SOAP `test` (`details.services`). */
export function WsdlServices({ services }) {
  return html`<div class="wsdl">
    ${services.map(
      (service) => html`<section class="wsdl__service">
        <h3>Service <code>${service.name}</code></h3>
        ${service.ports.map(
          (port) => html`<div class="wsdl__port">
            <h4>Port <code>${port.name}</code> <span class="badge badge--neutral">SOAP ${port.soap_version}</span></h4>
            <p class="muted">${port.operations.length} operations: ${port.operations.join(', ')}</p>
            ${(port.signatures ?? []).map((s) => html`<${SignatureView} signature=${s} />`)}
          </div>`,
        )}
      </section>`,
    )}
  </div>`;
}
