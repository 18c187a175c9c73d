// index.d.ts against the transports of both SDK lines, as a server's project
// writes it: `tsc -p tests` checks it, as an ES module (nothing is emitted or run).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpServer as McpServer2 } from '@modelcontextprotocol/server';
import { StdioServerTransport as StdioServerTransport2 } from '@modelcontextprotocol/server/stdio';
import { withToolErrors, type ToolErrorsOptions } from 'mcp-tool-errors';

const options: ToolErrorsOptions = { toolTimeout: 30_000, toolTimeouts: { deploy: 300_000 }, redactSecrets: true, maxErrorBytes: 16_384 };

export async function v1(): Promise<void> {
  await new McpServer({ name: 'v1', version: '1.0.0' }).connect(withToolErrors(new StdioServerTransport(), options));
  const http = withToolErrors(new StreamableHTTPServerTransport({ sessionIdGenerator: undefined }));
  await new McpServer({ name: 'v1', version: '1.0.0' }).connect(http);
  // The transport's own members, through the wrapper.
  const handled: Promise<void> = http.handleRequest({} as never, {} as never);
  await handled;
}

export async function v2(): Promise<void> {
  await new McpServer2({ name: 'v2', version: '1.0.0' }).connect(withToolErrors(new StdioServerTransport2(), { toolTimeout: 30_000 }));
}

// @ts-expect-error: an option that does not exist
withToolErrors(new StdioServerTransport(), { toolTimeot: 1 });
