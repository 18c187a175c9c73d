// The cost of withToolErrors: a tools/call answered by an McpServer (SDK 1.x)
// to a Client in the same process over the SDK's in-memory transport, with the
// server's transport wrapped and without, in the same run: batches of calls,
// the two taking turns, so that a machine's other load weighs on both alike;
// for a success (which never reaches the addon) and a tool error (rewrapped).
//
//   node bench/wrapper.mjs [CALLS_PER_BATCH] [BATCHES]
//
// Prints, per case, the median over the batches of the mean time of a call;
// then the addon's part of a tool error alone: the mean time of one rewrap
// (`Layer.rewrapResult` and `JSON.parse` of its answer) over 100,000.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createRequire } from 'node:module';
import { withToolErrors } from 'mcp-tool-errors';

const { Layer } = createRequire(import.meta.url)('../binding.cjs');

const calls = Number(process.argv[2] ?? 200);
const batches = Number(process.argv[3] ?? 200);

async function connected(wrap) {
  const server = new McpServer({ name: 'bench', version: '1.0.0' });
  server.registerTool('ok', {}, async () => ({ content: [{ type: 'text', text: 'done' }] }));
  server.registerTool('fail', {}, async () => ({
    content: [{ type: 'text', text: 'connect to postgres://admin:hunter2@db.internal/prod failed' }],
    isError: true,
  }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(wrap ? withToolErrors(serverSide, { toolTimeout: 30_000, redactSecrets: true }) : serverSide);
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

/** The mean time of one call of `tool`, in microseconds, over `calls` calls. */
async function mean(client, tool) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await client.callTool({ name: tool, arguments: {} });
  return Number(process.hrtime.bigint() - started) / 1000 / calls;
}

const clients = { without: await connected(false), with: await connected(true) };
const samples = {};
// The first tenth warms the JIT up and is not counted.
const warmup = Math.ceil(batches / 10);
for (let batch = 0; batch < warmup + batches; batch++) {
  for (const tool of ['ok', 'fail']) {
    const order = batch % 2 === 0 ? ['without', 'with'] : ['with', 'without'];
    for (const name of order) {
      const took = await mean(clients[name], tool);
      if (batch >= warmup) (samples[`${tool} ${name}`] ??= []).push(took);
    }
  }
}
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`${batches} batches of ${calls} calls, Node.js ${process.version}`);
console.log('| call | without the wrapper | with it | difference |\n|---|---|---|---|');
for (const [tool, label] of [['ok', 'a success'], ['fail', 'a tool error']]) {
  const without = median(samples[`${tool} without`]);
  const withIt = median(samples[`${tool} with`]);
  console.log(`| ${label} | ${without.toFixed(1)} µs | ${withIt.toFixed(1)} µs | ${(withIt - without).toFixed(1)} µs |`);
}

const failed = JSON.stringify({
  content: [{ type: 'text', text: 'connect to postgres://admin:hunter2@db.internal/prod failed' }],
  isError: true,
});
for (const redactSecrets of [false, true]) {
  const layer = new Layer({ redactSecrets });
  const rewraps = 100_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < rewraps; i++) JSON.parse(layer.rewrapResult('fail', failed));
  const took = Number(process.hrtime.bigint() - started) / 1000 / rewraps;
  console.log(`a rewrap in the addon, redactSecrets ${redactSecrets}: ${took.toFixed(1)} µs`);
}
process.exit(0);
