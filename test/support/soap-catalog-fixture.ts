import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { CatalogOperation } from '../../src/connectors/catalog.ts';
import { soapCatalog } from '../../src/connectors/soap/catalog.ts';
import { paramIssues } from '../../src/connectors/soap/param-checks.ts';
import { readSoapResponse } from '../../src/connectors/soap/response.ts';
import { shapeResult } from '../../src/connectors/soap/result-shape.ts';
import { type MessageLayout, operationLayout } from '../../src/connectors/soap/signature.ts';
import { writeWsdlEnvelope } from '../../src/connectors/soap/wsdl-envelope.ts';
import { loadWsdlDocuments } from '../../src/connectors/soap/wsdl-loader.ts';
import { compileWsdl, type WsdlModel } from '../../src/connectors/soap/wsdl-model.ts';

/**
 * A WSDL of the catalogue tests (soap-catalog*.test.ts), written to hold each thing the schemas say: a
 * document/literal operation whose params have every kind of type (built-ins, enumerations, facets, lists, unions,
 * simple content with attributes, repeated and nillable elements, derived types, a recursive type, `xsd:any`, a
 * substitution group), an rpc/encoded one with a SOAP-encoded array, overloads, and a second port.
 */
export const shopWsdl = `<?xml version="1.0" encoding="utf-8"?>
<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
  xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
  xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
  xmlns:tns="urn:shop" targetNamespace="urn:shop">
  <types>
    <xs:schema targetNamespace="urn:shop" elementFormDefault="qualified">
      <xs:import namespace="http://schemas.xmlsoap.org/soap/encoding/"/>
      <xs:simpleType name="Status"><xs:restriction base="xs:string">
        <xs:enumeration value="open"/><xs:enumeration value="closed"/><xs:enumeration value="1"/>
      </xs:restriction></xs:simpleType>
      <xs:simpleType name="Code"><xs:restriction base="xs:string">
        <xs:pattern value="[A-Z]{2,3}"/><xs:maxLength value="3"/>
      </xs:restriction></xs:simpleType>
      <xs:simpleType name="Percent"><xs:restriction base="xs:int">
        <xs:minInclusive value="0"/><xs:maxExclusive value="100"/>
      </xs:restriction></xs:simpleType>
      <xs:simpleType name="Money"><xs:restriction base="xs:decimal">
        <xs:totalDigits value="5"/><xs:fractionDigits value="2"/>
      </xs:restriction></xs:simpleType>
      <xs:simpleType name="Flags"><xs:list itemType="xs:boolean"/></xs:simpleType>
      <xs:simpleType name="Sizes"><xs:restriction>
        <xs:simpleType><xs:list itemType="xs:unsignedByte"/></xs:simpleType><xs:maxLength value="3"/>
      </xs:restriction></xs:simpleType>
      <xs:simpleType name="IntOrAll"><xs:union memberTypes="xs:short">
        <xs:simpleType><xs:restriction base="xs:string"><xs:enumeration value="All"/></xs:restriction></xs:simpleType>
      </xs:union></xs:simpleType>
      <xs:simpleType name="Currency"><xs:restriction base="xs:string">
        <xs:enumeration value="EUR"/><xs:enumeration value="USD"/>
      </xs:restriction></xs:simpleType>
      <xs:complexType name="Price"><xs:simpleContent><xs:extension base="xs:decimal">
        <xs:attribute name="currency" type="tns:Currency" use="required"/>
      </xs:extension></xs:simpleContent></xs:complexType>
      <xs:complexType name="Line">
        <xs:sequence>
          <xs:element name="sku" type="tns:Code"/>
          <xs:element name="quantity" type="xs:int"/>
          <xs:element name="price" type="tns:Price" minOccurs="0"/>
        </xs:sequence>
        <xs:attribute name="id" type="xs:int"/>
      </xs:complexType>
      <xs:complexType name="Shape"><xs:sequence><xs:element name="name" type="xs:string"/></xs:sequence></xs:complexType>
      <xs:complexType name="Circle"><xs:complexContent><xs:extension base="tns:Shape">
        <xs:sequence><xs:element name="radius" type="xs:double"/></xs:sequence>
      </xs:extension></xs:complexContent></xs:complexType>
      <xs:complexType name="Square"><xs:complexContent><xs:extension base="tns:Shape">
        <xs:sequence><xs:element name="side" type="xs:unsignedShort"/></xs:sequence>
      </xs:extension></xs:complexContent></xs:complexType>
      <xs:complexType name="Node"><xs:sequence>
        <xs:element name="label" type="xs:string"/>
        <xs:element name="child" type="tns:Node" minOccurs="0" maxOccurs="unbounded"/>
      </xs:sequence></xs:complexType>
      <xs:complexType name="Extra">
        <xs:sequence><xs:element name="known" type="xs:string"/><xs:any processContents="lax" minOccurs="0"/></xs:sequence>
        <xs:anyAttribute/>
      </xs:complexType>
      <xs:complexType name="Names"><xs:complexContent><xs:restriction base="soapenc:Array">
        <xs:attribute ref="soapenc:arrayType" wsdl:arrayType="xs:string[]"/>
      </xs:restriction></xs:complexContent></xs:complexType>
      <xs:element name="payment" type="xs:string"/>
      <xs:element name="card" type="xs:string" substitutionGroup="tns:payment"/>
      <xs:element name="cash" type="xs:int" substitutionGroup="tns:payment"/>
      <xs:element name="PlaceOrder"><xs:complexType>
        <xs:sequence>
          <xs:element name="id" type="xs:int"/>
          <xs:element name="status" type="tns:Status"/>
          <xs:element name="note" type="xs:string" minOccurs="0" nillable="true"/>
          <xs:element name="when" type="xs:dateTime"/>
          <xs:element name="lines" type="tns:Line" maxOccurs="unbounded"/>
          <xs:element name="discount" type="tns:Percent" minOccurs="0"/>
          <xs:element name="total" type="tns:Money" minOccurs="0"/>
          <xs:element name="flags" type="tns:Flags" minOccurs="0"/>
          <xs:element name="sizes" type="tns:Sizes" minOccurs="0"/>
          <xs:element name="limit" type="tns:IntOrAll" minOccurs="0"/>
          <xs:element name="shape" type="tns:Shape" minOccurs="0"/>
          <xs:element name="tree" type="tns:Node" minOccurs="0"/>
          <xs:element name="extra" type="tns:Extra" minOccurs="0"/>
          <xs:element ref="tns:payment"/>
          <xs:element name="blob" type="xs:base64Binary" minOccurs="0"/>
          <xs:element name="big" type="xs:long" minOccurs="0"/>
          <xs:element name="yes" type="xs:boolean" minOccurs="0"/>
          <xs:element name="day" type="xs:date" minOccurs="0"/>
        </xs:sequence>
        <xs:attribute name="channel" type="xs:string" use="required"/>
      </xs:complexType></xs:element>
      <xs:element name="PlaceOrderResponse"><xs:complexType><xs:sequence>
        <xs:element name="orderId" type="xs:long"/>
        <xs:element name="lines" type="tns:Line" minOccurs="0" maxOccurs="unbounded"/>
        <xs:element name="shape" type="tns:Shape" minOccurs="0"/>
        <xs:element name="price" type="tns:Price" minOccurs="0"/>
        <xs:element name="ratio" type="xs:double" minOccurs="0"/>
        <xs:element name="ok" type="xs:boolean" minOccurs="0"/>
        <xs:element name="tags" type="xs:string" minOccurs="0" maxOccurs="unbounded"/>
        <xs:element name="flags" type="tns:Flags" minOccurs="0"/>
        <xs:element name="gone" type="xs:int" nillable="true"/>
        <xs:element name="extra" type="tns:Extra" minOccurs="0"/>
      </xs:sequence></xs:complexType></xs:element>
      <xs:element name="FindById"><xs:complexType><xs:sequence><xs:element name="id" type="xs:int"/></xs:sequence></xs:complexType></xs:element>
      <xs:element name="FindByName"><xs:complexType><xs:sequence><xs:element name="name" type="xs:string"/></xs:sequence></xs:complexType></xs:element>
      <xs:element name="Found"><xs:complexType><xs:sequence><xs:element name="name" type="xs:string"/></xs:sequence></xs:complexType></xs:element>
    </xs:schema>
  </types>
  <message name="PlaceOrderIn"><part name="parameters" element="tns:PlaceOrder"/></message>
  <message name="PlaceOrderOut"><part name="parameters" element="tns:PlaceOrderResponse"/></message>
  <message name="FindByIdIn"><part name="parameters" element="tns:FindById"/></message>
  <message name="FindByNameIn"><part name="parameters" element="tns:FindByName"/></message>
  <message name="FoundOut"><part name="parameters" element="tns:Found"/></message>
  <message name="TagIn"><part name="names" type="tns:Names"/><part name="count" type="xs:int"/></message>
  <message name="TagOut"><part name="names" type="tns:Names"/></message>
  <portType name="Shop">
    <operation name="PlaceOrder">
      <documentation>Places an order.
      Pays it.</documentation>
      <input message="tns:PlaceOrderIn"/><output message="tns:PlaceOrderOut"/>
    </operation>
    <operation name="Find"><input name="ById" message="tns:FindByIdIn"/><output name="ByIdOut" message="tns:FoundOut"/></operation>
    <operation name="Find"><input name="ByName" message="tns:FindByNameIn"/><output name="ByNameOut" message="tns:FoundOut"/></operation>
  </portType>
  <portType name="Tags">
    <operation name="Tag"><input message="tns:TagIn"/><output message="tns:TagOut"/></operation>
  </portType>
  <binding name="ShopSoap" type="tns:Shop">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <operation name="PlaceOrder"><soap:operation soapAction="urn:shop/PlaceOrder"/>
      <input><soap:body use="literal"/></input><output><soap:body use="literal"/></output></operation>
    <operation name="Find"><soap:operation soapAction="urn:shop/FindById"/>
      <input name="ById"><soap:body use="literal"/></input><output name="ByIdOut"><soap:body use="literal"/></output></operation>
    <operation name="Find"><soap:operation soapAction="urn:shop/FindByName"/>
      <input name="ByName"><soap:body use="literal"/></input><output name="ByNameOut"><soap:body use="literal"/></output></operation>
  </binding>
  <binding name="ShopSoap12" type="tns:Shop">
    <soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <operation name="PlaceOrder"><soap12:operation soapAction="urn:shop/PlaceOrder"/>
      <input><soap12:body use="literal"/></input><output><soap12:body use="literal"/></output></operation>
  </binding>
  <binding name="TagsRpc" type="tns:Tags">
    <soap:binding style="rpc" transport="http://schemas.xmlsoap.org/soap/http"/>
    <operation name="Tag"><soap:operation soapAction="urn:shop/Tag"/>
      <input><soap:body use="encoded" namespace="urn:shop" encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"/></input>
      <output><soap:body use="encoded" namespace="urn:shop" encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"/></output>
    </operation>
  </binding>
  <service name="ShopService">
    <port name="ShopSoap12" binding="tns:ShopSoap12"><soap12:address location="http://shop.test/soap12"/></port>
    <port name="ShopSoap" binding="tns:ShopSoap"><soap:address location="http://shop.test/soap"/></port>
  </service>
  <service name="TagService">
    <port name="TagPort" binding="tns:TagsRpc"><soap:address location="http://shop.test/tags"/></port>
  </service>
</definitions>`;

/** A WSDL's compiled model, its documents given as text by URL (the main one at `http://fixture.test/main.wsdl`). */
export async function modelOf(text: string, others: Record<string, string> = {}): Promise<WsdlModel> {
  return compileWsdl(
    await loadWsdlDocuments('http://fixture.test/main.wsdl', async (url) => {
      if (url === 'http://fixture.test/main.wsdl') return text;
      const other = others[url];
      if (other === undefined) throw new Error(`no document ${url}`);
      return other;
    }),
  );
}

/** The catalogue of `model` with the bound operation each entry runs (the catalogue lists them in the WSDL's order). */
export function catalogWithOperations(model: WsdlModel, readOperations: string[] = []) {
  const catalog = soapCatalog(model, {}, new Set(readOperations));
  const operations = model.services.flatMap((s) => s.ports.flatMap((p) => p.operations));
  return catalog.map((entry, i) => ({ entry, operation: operations[i], layout: operationLayout(model.schema, operations[i]) }));
}

export interface Checked {
  entry: CatalogOperation;
  layout: { input: MessageLayout; output: MessageLayout | undefined };
}

/** Whether execute takes `params` for the operation: its params check finds nothing, and the envelope is written. */
export function executeTakes(layout: MessageLayout, params: unknown): boolean {
  if (paramIssues(layout.model, params, 'params', 'op').length > 0) return false;
  try {
    writeWsdlEnvelope({ version: '1.1', layout, params: params as Record<string, unknown> });
    return true;
  } catch {
    return false;
  }
}

/** The `data` execute answers for a reply envelope's Body content (`body`), read as execute reads it. */
export function dataOf(output: MessageLayout | undefined, body: string): unknown {
  const envelope = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>${body}</s:Body></s:Envelope>`;
  const bodyParts = output !== undefined && output.wrapper === undefined && output.model.particles.length > 1;
  const result = readSoapResponse(200, { 'content-type': 'text/xml' }, Buffer.from(envelope), { bodyParts });
  return output ? shapeResult(output.model, result) : result;
}

// ajv-formats is CommonJS with its function on `default`.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * A schema compiled by strict Ajv (2020-12): with formats as annotations (2020-12's default), or asserted as the MCP
 * server's Ajv asserts them (`formats`).
 */
export function compiled(schema: Record<string, unknown>, formats = false): ValidateFunction {
  const ajv = new Ajv2020({ strict: true, validateFormats: formats });
  if (formats) addFormats(ajv);
  return ajv.compile(schema);
}
