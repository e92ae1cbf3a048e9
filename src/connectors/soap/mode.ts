/** Query keys that ask a SOAP endpoint for its WSDL (`?wsdl`, WCF's `?singleWsdl`), compared in lower case. */
const wsdlQueryKeys = new Set(['wsdl', 'singlewsdl']);

/**
 * Whether an integration's `endpoint_url` selects WSDL mode (docs/execute.md#wsdl-mode-or-raw-mode): a `wsdl` or `singleWsdl` query key in any
 * letter case and with or without a value, or a path ending `.wsdl` in any case. Anything else, an unparsable URL
 * included, is raw mode.
 *
 * @example isWsdlUrl('https://h/Service.svc?singleWsdl') // true
 * @example isWsdlUrl('https://h/calc.asmx') // false
 */
export function isWsdlUrl(endpointUrl: string): boolean {
  let url: URL;
  try {
    url = new URL(endpointUrl);
  } catch {
    return false;
  }
  for (const key of url.searchParams.keys()) if (wsdlQueryKeys.has(key.toLowerCase())) return true;
  return url.pathname.toLowerCase().endsWith('.wsdl');
}

/**
 * The SOAP action of a raw-mode call (docs/execute.md#raw-mode): the request's `soap_action` when given (`""` stays empty),
 * otherwise `namespace/method` with exactly one slash between them, or the method alone without a namespace.
 *
 * @example soapActionFor({ namespace: 'http://tempuri.org/', method: 'Add' }) // 'http://tempuri.org/Add'
 * @example soapActionFor({ soapAction: '', namespace: 'urn:calc', method: 'Add' }) // ''
 */
export function soapActionFor(input: { soapAction?: string; namespace?: string; method: string }): string {
  if (input.soapAction !== undefined) return input.soapAction;
  if (input.namespace === undefined || input.namespace === '') return input.method;
  return input.namespace.endsWith('/') ? input.namespace + input.method : `${input.namespace}/${input.method}`;
}
