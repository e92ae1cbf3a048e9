import { ApiError } from '../../core/errors.ts';
import { wsdlNamespace, xsdNamespaces } from './namespaces.ts';
import { XmlNotWellFormed } from './xml-scanner.ts';
import { readXmlTree, type XmlElement } from './xml-tree.ts';

/** An `xs:schema` element, inline in a WSDL or a document of its own, and the namespace its components are in. */
export interface LoadedSchema {
  element: XmlElement;
  /** Its `targetNamespace`; for a schema without one that is included, the including schema's (a chameleon include). */
  tns: string;
}

/** The documents of one WSDL, each read once. */
export interface WsdlDocuments {
  /** The `wsdl:definitions` of the WSDL and of every WSDL it imports, the WSDL's own first. */
  definitions: XmlElement[];
  /** Every schema, in the order met. */
  schemas: LoadedSchema[];
}

interface Pending {
  url: string;
  /** For an included schema document: the including schema's namespace, which it takes when it has none. */
  includedInto?: string;
}

/**
 * Fetches a WSDL and everything it names (`wsdl:import location`, `xs:import`/`xs:include`/`xs:redefine`
 * `schemaLocation`, at any depth), each document once and one after another through `fetchText` (soap-http.ts bounds
 * their number, bytes and time together). Locations resolve against the document that names them and must be http(s) URLs: a WSDL
 * does not make Interchange read local files. Each document is read once, namespace-aware, by `readXmlTree`.
 */
export async function loadWsdlDocuments(url: string, fetchText: (url: string) => Promise<string>): Promise<WsdlDocuments> {
  const documents: WsdlDocuments = { definitions: [], schemas: [] };
  const queue: Pending[] = [{ url }];
  const seen = new Set([withoutFragment(url)]);
  const follow = (location: string | undefined, base: string, includedInto?: string) => {
    if (location === undefined || location.trim() === '') return;
    const resolved = URL.parse(location.trim(), base);
    if (resolved === null || (resolved.protocol !== 'http:' && resolved.protocol !== 'https:')) {
      const shown = resolved === null ? location : resolved.href;
      throw new ApiError('upstream_invalid_response', `The WSDL imports ${shown}, which is not an http(s) URL.`);
    }
    const target = withoutFragment(resolved.href);
    if (seen.has(target)) return;
    seen.add(target);
    queue.push({ url: target, ...(includedInto !== undefined && { includedInto }) });
  };
  const addSchema = (element: XmlElement, tns: string, base: string) => {
    documents.schemas.push({ element, tns });
    for (const child of element.children) {
      if (!xsdNamespaces.has(child.ns)) continue;
      if (child.local === 'import') follow(child.attributes.schemaLocation, base);
      else if (child.local === 'include' || child.local === 'redefine') follow(child.attributes.schemaLocation, base, tns);
    }
  };

  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const root = readDocument(await fetchText(next.url));
    if (root.ns === wsdlNamespace && root.local === 'definitions') {
      documents.definitions.push(root);
      for (const child of root.children) {
        if (child.ns !== wsdlNamespace) continue;
        if (child.local === 'import') follow(child.attributes.location, next.url);
        if (child.local !== 'types') continue;
        for (const schema of child.children) {
          if (xsdNamespaces.has(schema.ns) && schema.local === 'schema') {
            addSchema(schema, schema.attributes.targetNamespace ?? '', next.url);
          }
        }
      }
    } else if (xsdNamespaces.has(root.ns) && root.local === 'schema') {
      addSchema(root, root.attributes.targetNamespace ?? next.includedInto ?? '', next.url);
    } else {
      throw new ApiError('upstream_invalid_response', 'The WSDL could not be read.', {
        reason: `a document's root element is ${root.local} in ${root.ns === '' ? 'no namespace' : root.ns}, neither WSDL 1.1's definitions nor an XML Schema`,
      });
    }
  }
  if (documents.definitions.length === 0) {
    throw new ApiError('upstream_invalid_response', 'The WSDL could not be read.', {
      reason: 'no document is a WSDL 1.1 definitions element',
    });
  }
  return documents;
}

/**
 * One document as a tree; a document that is not well-formed XML means the WSDL cannot be read. A DTD or a bound of
 * docs/limits.md#upstreams is said as the reader says it.
 */
function readDocument(text: string): XmlElement {
  try {
    return readXmlTree(text);
  } catch (error) {
    if (!(error instanceof XmlNotWellFormed)) throw error;
    throw new ApiError('upstream_invalid_response', 'The WSDL could not be read.', { reason: error.message.slice(0, 300) });
  }
}

function withoutFragment(url: string): string {
  const hash = url.indexOf('#');
  return hash === -1 ? url : url.slice(0, hash);
}
