// The official TypeScript client (@modelcontextprotocol/sdk, its `Client`)
// against one stdio server, connected both ways a user would: over stdio,
// starting the server itself (StdioClientTransport), and over Streamable HTTP
// at the bridge's URL (StreamableHTTPClientTransport). MCP_SDK_DIR is the
// SDK's package folder.
//
//   bridge_client.mjs URL REQUESTS COMMAND [ARGS...]
//     the same requests both ways; prints {"stdio": ..., "bridge": ...}
//   bridge_client.mjs --sessions URL FIRST SECOND
//     two clients connected to the bridge at once, their requests taken in
//     turn (the first's first, the second's first, ...); prints
//     {"first": ..., "second": ...}; each deletes its session at the end
//
// REQUESTS (FIRST, SECOND) is a JSON list of {"method", "params"}: `tools/list`
// and `tools/call` are sent with the client's own methods, anything else as it
// is. The server's requests (sampling, elicitation, roots) get fixed answers.
// Each way is the server's answer to `initialize` (its info and
// capabilities) and the outcome of each request, {"result": ...} or
// {"error": {"code", "message", "data"}}, on one JSON line.
import { pathToFileURL } from "node:url";

const sdk = (path) => import(pathToFileURL(`${process.env.MCP_SDK_DIR}/dist/esm/${path}`).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { McpError, ResultSchema, CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } =
  await sdk("types.js");

async function connect(transport) {
  const capabilities = { sampling: {}, elicitation: { form: {} }, roots: {} };
  const client = new Client({ name: "bridge-test", version: "1.0.0" }, { capabilities });
  client.setRequestHandler(CreateMessageRequestSchema, async ({ params }) => ({
    model: "fixed",
    role: "assistant",
    content: { type: "text", text: `sampled: ${params.messages[0].content.text}` },
  }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: [{ uri: "file:///srv/project", name: "project" }],
  }));
  await client.connect(transport);
  return client;
}

async function outcome(client, { method, params }) {
  try {
    if (method === "tools/list") return { result: await client.listTools() };
    if (method === "tools/call") return { result: await client.callTool(params) };
    return { result: await client.request({ method, params }, ResultSchema) };
  } catch (error) {
    if (!(error instanceof McpError)) throw error;
    const { code, message, data } = error;
    return { error: { code, message, data } };
  }
}

async function run(transport, requests) {
  const client = await connect(transport);
  const outcomes = [];
  for (const request of requests) outcomes.push(await outcome(client, request));
  const server = { info: client.getServerVersion(), capabilities: client.getServerCapabilities() };
  await client.close();
  return { server, outcomes };
}

const http = (url) => new StreamableHTTPClientTransport(new URL(url));
const args = process.argv.slice(2);
let received;
if (args[0] === "--sessions") {
  const [, url, first, second] = args;
  const clients = [await connect(http(url)), await connect(http(url))];
  const requests = [JSON.parse(first), JSON.parse(second)];
  const outcomes = [[], []];
  for (let i = 0; i < Math.max(...requests.map((list) => list.length)); i++) {
    for (const side of [0, 1]) {
      if (i < requests[side].length) outcomes[side].push(await outcome(clients[side], requests[side][i]));
    }
  }
  // A client done with its session deletes it.
  await Promise.all(clients.map((client) => client.transport.terminateSession()));
  await Promise.all(clients.map((client) => client.close()));
  received = { first: outcomes[0], second: outcomes[1] };
} else {
  const [url, requests, command, ...commandArgs] = args;
  const list = JSON.parse(requests);
  received = {
    stdio: await run(new StdioClientTransport({ command, args: commandArgs }), list),
    bridge: await run(http(url), list),
  };
}
console.log(JSON.stringify(received));
