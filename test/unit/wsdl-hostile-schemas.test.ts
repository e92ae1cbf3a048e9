import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ComplexModel } from '../../src/connectors/soap/schema-model.ts';
import { operationLayout } from '../../src/connectors/soap/signature.ts';
import { loadWsdlDocuments } from '../../src/connectors/soap/wsdl-loader.ts';
import { compileWsdl } from '../../src/connectors/soap/wsdl-model.ts';

/**
 * Schemas written to make a compiler loop or blow up (issue 23): what the derived types, substitution groups, lists
 * and restrictions of WSDL mode must still compile in bounded work. A WSDL is the upstream's to write.
 */

/** A one-operation document/literal WSDL whose input is `<Call>` of type `tns:Holder`, with `schema` beside it. */
function wsdl(schema: string): string {
  return `<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
  xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:tns="urn:h" targetNamespace="urn:h">
  <types><xs:schema targetNamespace="urn:h" elementFormDefault="qualified">
    <xs:element name="Call" type="tns:Holder"/>${schema}
  </xs:schema></types>
  <message name="In"><part name="p" element="tns:Call"/></message>
  <portType name="P"><operation name="Call"><input message="tns:In"/></operation></portType>
  <binding name="B" type="tns:P"><soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <operation name="Call"><soap:operation soapAction=""/><input><soap:body use="literal"/></input></operation></binding>
  <service name="S"><port name="P" binding="tns:B"><soap:address location="http://127.0.0.1:1/"/></port></service>
</definitions>`;
}

/** The input model of the one operation of `text`. */
async function callModel(text: string): Promise<ComplexModel> {
  const model = compileWsdl(await loadWsdlDocuments('http://fixture.test/h.wsdl', async () => text));
  return operationLayout(model.schema, model.services[0].ports[0].operations[0]).input.model;
}

describe('hostile schemas compile in bounded work', () => {
  test('20,000 types derived from one base are a push each', async () => {
    const derived = Array.from(
      { length: 20_000 },
      (_, i) =>
        `<xs:complexType name="D${i}"><xs:complexContent><xs:extension base="tns:Base"/></xs:complexContent></xs:complexType>`,
    ).join('');
    const holder =
      '<xs:complexType name="Holder"><xs:sequence><xs:element name="b" type="tns:Base"/></xs:sequence></xs:complexType>';
    const base = '<xs:complexType name="Base"><xs:sequence><xs:element name="x" type="xs:int"/></xs:sequence></xs:complexType>';
    const model = await callModel(wsdl(holder + base + derived));
    const b = model.particles[0].model as ComplexModel;
    assert.equal(b.subtypes?.size, 20_000);
  });

  test('a derivation cycle, a substitution group cycle and self-derived simple types end', async () => {
    const schema = `
      <xs:complexType name="Holder"><xs:sequence>
        <xs:element ref="tns:a"/><xs:element name="s" type="tns:Self"/><xs:element name="l" type="tns:Loop"/>
      </xs:sequence></xs:complexType>
      <xs:complexType name="A"><xs:complexContent><xs:extension base="tns:B"><xs:sequence>
        <xs:element name="fromA" type="xs:string"/></xs:sequence></xs:extension></xs:complexContent></xs:complexType>
      <xs:complexType name="B"><xs:complexContent><xs:extension base="tns:A"><xs:sequence>
        <xs:element name="fromB" type="xs:string"/></xs:sequence></xs:extension></xs:complexContent></xs:complexType>
      <xs:element name="a" type="tns:A" substitutionGroup="tns:b"/>
      <xs:element name="b" type="tns:B" substitutionGroup="tns:a"/>
      <xs:simpleType name="Self"><xs:restriction base="tns:Self"><xs:maxLength value="3"/></xs:restriction></xs:simpleType>
      <xs:simpleType name="Loop"><xs:list itemType="tns:Loop"/></xs:simpleType>`;
    const model = await callModel(wsdl(schema));
    // The head a, then b standing in for it (a's own membership in b's group is a loop, not a member).
    assert.deepEqual(
      model.particles.map((p) => [p.name, p.substitutes]),
      [
        ['a', undefined],
        ['b', 'a'],
        ['s', undefined],
        ['l', undefined],
      ],
    );
    const a = model.particles[0].model as ComplexModel;
    assert.deepEqual([...(a.subtypes?.keys() ?? [])], ['{urn:h}B']);
    assert.equal(model.particles[2].model.kind, 'simple');
    assert.equal(model.particles[3].model.kind, 'simple');
  });
});
