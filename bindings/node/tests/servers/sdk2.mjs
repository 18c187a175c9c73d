// A server on the official TypeScript SDK 2.x (`@modelcontextprotocol/server`)
// over stdio, with the tools of tools.mjs; with `--wrap`, its transport
// wrapped by withToolErrors with the options in the JSON of the environment
// variable TOOL_ERRORS_OPTIONS.
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { withToolErrors } from 'mcp-tool-errors';
import { registerTools } from './tools.mjs';

const server = new McpServer({ name: 'sdk2-test', version: '1.0.0' }, { capabilities: { logging: {} } });
registerTools(server, {
  signalOf: (context) => context.mcpReq.signal,
  notify: (context, notification) => context.mcpReq.notify(notification),
  ping: (context) => context.mcpReq.send({ method: 'ping' }),
});
const transport = new StdioServerTransport();
await server.connect(process.argv.includes('--wrap')
  ? withToolErrors(transport, JSON.parse(process.env.TOOL_ERRORS_OPTIONS))
  : transport);
