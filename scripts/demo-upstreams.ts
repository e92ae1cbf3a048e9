/**
 * `npm run demo:upstreams`: two upstreams on 127.0.0.1 to try Interchange on (README: Quick start), until Ctrl-C:
 *   - a GraphQL API of 25 users, Relay-style (`users(first, after)`), on DEMO_GRAPHQL_PORT (4000): the tests' own
 *     server (test/support/graphql-server.ts), on graphql-js;
 *   - a SOAP calculator with a WSDL (document/literal: Add and Subtract of two ints) on DEMO_SOAP_PORT (4001), served
 *     by node-soap.
 * A port of 0 takes a free one. Prints where each listens, one line each, then waits.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from 'soap';
import { startGraphqlServer } from '../test/support/graphql-server.ts';

const calculatorWsdl = `<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
  xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:tns="http://example.com/calculator"
  targetNamespace="http://example.com/calculator" name="Calculator">
  <wsdl:types>
    <xs:schema targetNamespace="http://example.com/calculator" elementFormDefault="qualified">
      <xs:element name="Add"><xs:complexType><xs:sequence>
        <xs:element name="a" type="xs:int"/><xs:element name="b" type="xs:int"/></xs:sequence></xs:complexType></xs:element>
      <xs:element name="AddResponse"><xs:complexType><xs:sequence>
        <xs:element name="AddResult" type="xs:int"/></xs:sequence></xs:complexType></xs:element>
      <xs:element name="Subtract"><xs:complexType><xs:sequence>
        <xs:element name="a" type="xs:int"/><xs:element name="b" type="xs:int"/></xs:sequence></xs:complexType></xs:element>
      <xs:element name="SubtractResponse"><xs:complexType><xs:sequence>
        <xs:element name="SubtractResult" type="xs:int"/></xs:sequence></xs:complexType></xs:element>
    </xs:schema>
  </wsdl:types>
  <wsdl:message name="AddIn"><wsdl:part name="parameters" element="tns:Add"/></wsdl:message>
  <wsdl:message name="AddOut"><wsdl:part name="parameters" element="tns:AddResponse"/></wsdl:message>
  <wsdl:message name="SubtractIn"><wsdl:part name="parameters" element="tns:Subtract"/></wsdl:message>
  <wsdl:message name="SubtractOut"><wsdl:part name="parameters" element="tns:SubtractResponse"/></wsdl:message>
  <wsdl:portType name="CalculatorPort">
    <wsdl:operation name="Add"><wsdl:input message="tns:AddIn"/><wsdl:output message="tns:AddOut"/></wsdl:operation>
    <wsdl:operation name="Subtract"><wsdl:input message="tns:SubtractIn"/><wsdl:output message="tns:SubtractOut"/></wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="CalculatorBinding" type="tns:CalculatorPort">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="Add"><soap:operation soapAction="http://example.com/calculator/Add"/>
      <wsdl:input><soap:body use="literal"/></wsdl:input><wsdl:output><soap:body use="literal"/></wsdl:output></wsdl:operation>
    <wsdl:operation name="Subtract"><soap:operation soapAction="http://example.com/calculator/Subtract"/>
      <wsdl:input><soap:body use="literal"/></wsdl:input><wsdl:output><soap:body use="literal"/></wsdl:output></wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="CalculatorService">
    <wsdl:port name="CalculatorPort" binding="tns:CalculatorBinding"><soap:address location="ADDRESS"/></wsdl:port>
  </wsdl:service>
</wsdl:definitions>`;

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

const graphql = await startGraphqlServer({ port: port('DEMO_GRAPHQL_PORT', 4000) });

const soapServer = createServer((_req, res) => res.writeHead(404).end());
await new Promise<void>((resolve, reject) => {
  soapServer.once('error', reject);
  soapServer.listen(port('DEMO_SOAP_PORT', 4001), '127.0.0.1', resolve);
});
const soapOrigin = `http://127.0.0.1:${(soapServer.address() as AddressInfo).port}`;
const asInt = (value: unknown) => Number.parseInt(String(value), 10);
listen(
  soapServer,
  '/calculator',
  {
    CalculatorService: {
      CalculatorPort: {
        Add: (args: { a: unknown; b: unknown }) => ({ AddResult: asInt(args.a) + asInt(args.b) }),
        Subtract: (args: { a: unknown; b: unknown }) => ({ SubtractResult: asInt(args.a) - asInt(args.b) }),
      },
    },
  },
  calculatorWsdl.replace('ADDRESS', `${soapOrigin}/calculator`),
);

console.log(`GraphQL  ${graphql.url}  (users: { users(first: 10) { totalCount edges { node { id name } } } })`);
console.log(`SOAP     ${soapOrigin}/calculator?wsdl  (Add, Subtract)`);
console.log('Ctrl-C stops them.');

const stop = async () => {
  soapServer.close();
  await graphql.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
