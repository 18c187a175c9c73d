// A server on the official TypeScript SDK 1.x (`@modelcontextprotocol/sdk`),
// with the tools of tools.mjs: over stdio, or with `--http` over Streamable
// HTTP on a free port of 127.0.0.1 (printed on stderr as `listening on
// ADDR`); with `--wrap`, its transports wrapped by withToolErrors with the
// options in the JSON of the environment variable TOOL_ERRORS_OPTIONS.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { withToolErrors } from 'mcp-tool-errors';
import { registerTools } from './tools.mjs';

const wrap = process.argv.includes('--wrap')
  ? (transport) => withToolErrors(transport, JSON.parse(process.env.TOOL_ERRORS_OPTIONS))
  : (transport) => transport;

function mcpServer() {
  const server = new McpServer({ name: 'sdk1-test', version: '1.0.0' }, { capabilities: { logging: {} } });
  registerTools(server, {
    signalOf: (extra) => extra.signal,
    notify: (extra, notification) => extra.sendNotification(notification),
    ping: (extra) => extra.sendRequest({ method: 'ping' }, EmptyResultSchema),
  });
  return server;
}

if (process.argv.includes('--http')) {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = sessions.get(id);
    if (transport === undefined) {
      transport = wrap(new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
      }));
      await mcpServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  http.listen(0, '127.0.0.1', () => console.error(`listening on 127.0.0.1:${http.address().port}`));
} else {
  await mcpServer().connect(wrap(new StdioServerTransport()));
}
