import { buildEnvelope, envelopeIssues } from './src/connectors/soap/envelope.ts';
const big = { items: Array.from({ length: 20000 }, (_, i) => ({ id: i, name: `name ${i} & more`, note: 'plain text here', tags: ['x', 'y'] })) };
for (const [fn, f] of [['issues', envelopeIssues], ['build', buildEnvelope]] as const) {
  const times: number[] = [];
  for (let r = 0; r < 25; r++) {
    const t = process.hrtime.bigint();
    f({ version: '1.1', method: 'Add', params: big });
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(fn, 'median', times[12].toFixed(1), 'ms');
}
