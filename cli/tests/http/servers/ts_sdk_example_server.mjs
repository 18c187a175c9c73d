// The official TypeScript SDK's own example Streamable HTTP server
// (@modelcontextprotocol/sdk, dist/esm/examples/server/simpleStreamableHttp.js,
// pinned by scripts/install-test-servers.sh), run as it ships: sessions,
// answers in event streams, tasks in an in-memory store. MCP_SDK_DIR is the
// SDK's package folder.
//
// The example listens on all interfaces, on the port in MCP_PORT (3000
// without it). Here it listens on 127.0.0.1, on a port the system picks, and
// `listening on 127.0.0.1:PORT` is printed on stderr once it accepts
// connections.
import net from "node:net";
import { pathToFileURL } from "node:url";

process.env.MCP_PORT = "0";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (port, ...rest) {
  if (typeof port !== "number") {
    return listen.call(this, port, ...rest);
  }
  this.once("listening", () => {
    const { address, port } = this.address();
    process.stderr.write(`listening on ${address}:${port}\n`);
  });
  return listen.call(this, port, "127.0.0.1", ...rest);
};

const example = `${process.env.MCP_SDK_DIR}/dist/esm/examples/server/simpleStreamableHttp.js`;
await import(pathToFileURL(example).href);
