/**
 * The upstream of the warm SOAP bench (bench/soap.ts), in a process of its own: the calculator WSDL
 * (test/support/fixtures/soap/calculator.wsdl) at `GET /calc?wsdl`, and at `POST /calc` an answer made once and sent at
 * once: Add's (`<AddResult>5</AddResult>`), SumList's (its large request is what is measured), or for GetOrder an order of `lines` lines (about 10 MB for 100,000), so
 * that what is measured is the client.
 *   node bench/soap-upstream.ts LINES   → prints {"port": N} when listening on 127.0.0.1
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const lines = Number(process.argv[2] ?? 100_000);
const wsdl = readFileSync(join(import.meta.dirname, '../test/support/fixtures/soap/calculator.wsdl'));
const envelope = (body: string) =>
  Buffer.from(
    '<?xml version="1.0" encoding="UTF-8"?><S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/">' +
      `<S:Body>${body}</S:Body></S:Envelope>`,
  );
const add = envelope('<c:AddResponse xmlns:c="http://example.com/calculator"><c:AddResult>5</c:AddResult></c:AddResponse>');
const sumList = envelope(
  '<c:SumListResponse xmlns:c="http://example.com/calculator"><c:SumListResult>0</c:SumListResult></c:SumListResponse>',
);
const line = (i: number) =>
  `<c:lines><c:sku>SKU-${i}</c:sku><c:quantity>${i % 97}</c:quantity><c:price>${i}.25</c:price></c:lines>`;
const order = envelope(
  '<c:GetOrderResponse xmlns:c="http://example.com/calculator"><c:GetOrderResult><c:id>B-1</c:id><c:customer>ACME</c:customer>' +
    Array.from({ length: lines }, (_, i) => line(i)).join('') +
    '</c:GetOrderResult></c:GetOrderResponse>',
);

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/xml' }).end(wsdl);
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const answer = body.includes('GetOrder') ? order : body.includes('SumList') ? sumList : add;
    res.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' }).end(answer);
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: (server.address() as AddressInfo).port })));
