// The cost of withToolErrors: a tools/call answered by an McpServer (SDK 1.x)
// to a Client in the same process over the SDK's in-memory transport, with the
// server's transport wrapped and without, alternated in rounds in the same run;
// for a success (which never reaches the addon) and a tool error (rewrapped).
//
//   node bench/wrapper.mjs [CALLS_PER_ROUND] [ROUNDS]
//
// Prints, per case, the median over the rounds of the mean time of a call.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { withToolErrors } from 'mcp-tool-errors';

const calls = Number(process.argv[2] ?? 2000);
const rounds = Number(process.argv[3] ?? 7);

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
for (let round = 0; round <= rounds; round++) {
  for (const tool of ['ok', 'fail']) {
    for (const [name, client] of Object.entries(clients)) {
      const took = await mean(client, tool);
      // Round 0 warms the JIT up and is not counted.
      if (round > 0) (samples[`${tool} ${name}`] ??= []).push(took);
    }
  }
}
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`${calls} calls × ${rounds} rounds, Node.js ${process.version}`);
console.log('| call | without the wrapper | with it | difference |\n|---|---|---|---|');
for (const [tool, label] of [['ok', 'a success'], ['fail', 'a tool error']]) {
  const without = median(samples[`${tool} without`]);
  const withIt = median(samples[`${tool} with`]);
  console.log(`| ${label} | ${without.toFixed(1)} µs | ${withIt.toFixed(1)} µs | ${(withIt - without).toFixed(1)} µs |`);
}
process.exit(0);
