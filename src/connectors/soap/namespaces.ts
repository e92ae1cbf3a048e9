/** The namespaces WSDL mode reads documents by. */

export const wsdlNamespace = 'http://schemas.xmlsoap.org/wsdl/';

/** XML Schema's namespace, as writers write it. */
export const xsdNamespace = 'http://www.w3.org/2001/XMLSchema';

/** XML Schema's namespace, and the two drafts' that older generators still write. */
export const xsdNamespaces: ReadonlySet<string> = new Set([
  xsdNamespace,
  'http://www.w3.org/2000/10/XMLSchema',
  'http://www.w3.org/1999/XMLSchema',
]);

export const soapEncodingNamespace = 'http://schemas.xmlsoap.org/soap/encoding/';

/** The namespace the `xml` prefix is bound to, always (Namespaces in XML 1.0 §3). */
export const xmlNamespace = 'http://www.w3.org/XML/1998/namespace';

/** SOAP's binding extensions of WSDL 1.1, and the SOAP version each stands for. */
export const soapBindingNamespaces: Readonly<Record<string, '1.1' | '1.2'>> = {
  'http://schemas.xmlsoap.org/wsdl/soap/': '1.1',
  'http://schemas.xmlsoap.org/wsdl/soap12/': '1.2',
};

/** XML Schema's instance namespace, of `xsi:type` and `xsi:nil`. */
export const xsiNamespace = 'http://www.w3.org/2001/XMLSchema-instance';
