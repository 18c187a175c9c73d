// The official TypeScript client (@modelcontextprotocol/sdk, the version that
// server-everything depends on) over Streamable HTTP: connects to the URL in
// argv[2], makes the calls the tests compare, and prints what it received as
// one JSON line on stdout. MCP_SDK_DIR is the SDK's package folder.
import { pathToFileURL } from "node:url";

const sdk = (path) => import(pathToFileURL(`${process.env.MCP_SDK_DIR}/dist/esm/${path}`).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const client = new Client({ name: "everything-http-test", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
const progress = [];
const received = {
  tools: await client.listTools(),
  echo: await client.callTool({ name: "echo", arguments: { message: "héllo \"world\"\n" } }),
  invalid: await client.callTool({ name: "echo", arguments: {} }),
  long: await client.callTool(
    { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
    undefined,
    { onprogress: (update) => progress.push(update) },
  ),
};
received.progress = progress;
await client.close();
console.log(JSON.stringify(received));
