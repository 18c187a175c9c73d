// The official TypeScript client (@modelcontextprotocol/sdk) when its session
// is gone, as when the bridge replica that held it restarted: connected to
// the bridge at URL, it calls `echo`, prints the outcome, waits for a line
// on stdin (the bridge restarted meanwhile), and calls `echo` twice more.
// MCP_SDK_DIR is the SDK's package folder.
//
//   session_gone.mjs URL
//
// Prints {"first"} on one line, then {"first", "second", "third"}: each
// {"result": content} or {"error": message}.
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const sdk = (path) => import(pathToFileURL(`${process.env.MCP_SDK_DIR}/dist/esm/${path}`).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const [url] = process.argv.slice(2);
const client = new Client({ name: "session-gone", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

async function echo(text) {
  try {
    return { result: (await client.callTool({ name: "echo", arguments: { text } })).content };
  } catch (error) {
    return { error: String(error.message) };
  }
}

const first = await echo("first");
console.log(JSON.stringify({ first }));
await createInterface({ input: process.stdin })[Symbol.asyncIterator]().next();
const second = await echo("second");
const third = await echo("third");
console.log(JSON.stringify({ first, second, third }));
process.exit(0);
