import { isJsonObject } from '../../core/json-object.ts';
import { attributePrefix, childElement, elementText, elementValue } from './xml.ts';

/** A SOAP 1.1 or 1.2 fault in the one shape of `soap_fault` details (docs/errors.md#soap_fault). */
export interface SoapFault {
  fault_code: string;
  fault_string: string;
  detail: unknown;
}

/**
 * The fault of a parsed SOAP answer (`parseXml`'s output), normalised, or undefined when its Body holds no Fault.
 *
 * - SOAP 1.1: `faultcode`, `faultstring`, `detail`; `faultactor` is not kept.
 * - SOAP 1.2 (recognised by `Code` or `Reason`): `fault_code` is `Code/Value` followed by every nested
 *   `Subcode/Value`, joined by `/` (`soap:Sender/m:InvalidInput`) — a QName cannot contain `/`, so the chain splits
 *   back unambiguously, and `detail` stays exactly the upstream's Detail. `fault_string` is the `Reason/Text` whose
 *   `xml:lang` is English (`en`, `en-GB`…), else the first one. `Node` and `Role` are not kept.
 * - Codes are the QName text as the service wrote it, prefix included (`soap:Client`, `s:Server`): the prefix's
 *   namespace is gone once prefixes are removed, so it is not rewritten. A missing code or string is `""`.
 * - `detail` is the Detail element as `elementValue` shows it (strings, `$attributes`, arrays), or null when it is
 *   absent or empty.
 *
 * @example parseSoapFault({ Envelope: { Body: { Fault: { faultcode: 'soap:Client', faultstring: 'Bad input' } } } })
 * // { fault_code: 'soap:Client', fault_string: 'Bad input', detail: null }
 */
export function parseSoapFault(document: unknown): SoapFault | undefined {
  const fault = childElement(childElement(childElement(document, 'Envelope'), 'Body'), 'Fault');
  if (fault === undefined) return undefined;
  const node = isJsonObject(fault) ? fault : {};
  if (Object.hasOwn(node, 'Code') || Object.hasOwn(node, 'Reason')) {
    return {
      fault_code: codeChain(childElement(node, 'Code')),
      fault_string: reasonText(childElement(node, 'Reason')),
      detail: detailOf(childElement(node, 'Detail')),
    };
  }
  return {
    fault_code: elementText(childElement(node, 'faultcode')),
    fault_string: elementText(childElement(node, 'faultstring')),
    detail: detailOf(childElement(node, 'detail')),
  };
}

/** `Value` of the Code, then of each nested Subcode. Depth is bounded by the parser's nesting limit. */
function codeChain(code: unknown): string {
  const values: string[] = [];
  for (let level = code; level !== undefined; level = childElement(level, 'Subcode')) {
    const value = childElement(level, 'Value');
    // A Code written as bare text (not conformant, but seen) still names the fault.
    values.push(elementText(value === undefined ? level : value));
  }
  return values.join('/');
}

function reasonText(reason: unknown): string {
  const texts = isJsonObject(reason) && reason.Text !== undefined ? [reason.Text].flat() : [reason];
  const english = texts.find((text) => {
    const lang = isJsonObject(text) ? text[`${attributePrefix}lang`] : undefined;
    return typeof lang === 'string' && /^en(?:-|$)/i.test(lang);
  });
  return elementText(english ?? texts[0]);
}

function detailOf(detail: unknown): unknown {
  if (detail === undefined) return null;
  const value = elementValue(detail);
  return value === '' ? null : value;
}
