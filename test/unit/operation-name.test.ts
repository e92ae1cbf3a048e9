import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { operationNameOf } from '../../src/execution/operation-name.ts';

/** docs/execute.md#the-executions-log: what an execution's record names of its call. */
describe('operationNameOf', () => {
  test('a SOAP method, a GraphQL operation_name, a named operation, a first root field', () => {
    assert.equal(operationNameOf({ method: 'GetOrder', params: {} }), 'GetOrder');
    assert.equal(operationNameOf({ query: 'query A { a } query B { b }', operation_name: 'B' }), 'B');
    assert.equal(operationNameOf({ query: 'query GetOrders($id: ID!) { order(id: $id) { id } }' }), 'GetOrders');
    assert.equal(operationNameOf({ mutation: '  mutation\n  CreateOrder { createOrder { id } }' }), 'CreateOrder');
    assert.equal(operationNameOf({ query: '{ orders { id } }' }), 'orders');
    assert.equal(operationNameOf({ query: '# the orders\n{ first: orders { id } }' }), 'orders');
    assert.equal(operationNameOf({ mutation: 'mutation ($n: String) { createOrder(n: $n) { id } }' }), 'createOrder');
    assert.equal(operationNameOf({ query: 'query @cached { orders { id } }' }), 'orders');
  });

  test('none: a test or batch, a document with no name to read, a non-string field', () => {
    assert.equal(operationNameOf({}), null);
    assert.equal(operationNameOf({ items: [] }), null);
    assert.equal(operationNameOf({ query: 'fragment F on Order { id }' }), null);
    assert.equal(operationNameOf({ method: 42, query: 7 }), null);
    assert.equal(operationNameOf({ method: '' }), null);
  });

  test('bounded: a long name is cut to 200 characters, a huge document is read for its first 2,000 only', () => {
    assert.equal(operationNameOf({ method: 'M'.repeat(5000) })?.length, 200);
    assert.equal(operationNameOf({ query: `${' '.repeat(3000)}{ late }` }), null);
    // A pathological document: the patterns stay linear (this finishes at once or the suite's timeout says so).
    assert.equal(operationNameOf({ query: `query ${'('.repeat(100_000)}` }), null);
    assert.equal(operationNameOf({ query: `{ ${'@a '.repeat(50_000)}` }), null);
  });
});
