// A stdio MCP server on the official TypeScript SDK (@modelcontextprotocol/sdk,
// pinned by scripts/install-test-servers.sh) with one tool run as a task,
// `export`, registered with `registerToolTask`. Its task fails as the SDK's own
// examples fail one (examples/server/simpleStreamableHttp.js,
// simpleTaskInteractive.js): `storeTaskResult(taskId, 'failed', {content,
// isError: true})`, a moment after the call is answered with the task handle.
// MCP_SDK_DIR is the SDK's package folder.
import { pathToFileURL } from "node:url";

const sdk = (path) => import(pathToFileURL(`${process.env.MCP_SDK_DIR}/dist/esm/${path}`).href);
const { McpServer } = await sdk("server/mcp.js");
const { StdioServerTransport } = await sdk("server/stdio.js");
const { InMemoryTaskStore, InMemoryTaskMessageQueue } = await sdk("experimental/tasks/stores/in-memory.js");

const server = new McpServer(
  { name: "ts-task-server", version: "1.0.0" },
  {
    capabilities: { tasks: { requests: { tools: { call: {} } } } },
    taskStore: new InMemoryTaskStore(),
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  },
);

server.experimental.tasks.registerToolTask(
  "export",
  { description: "Exports a project; its task fails: the quota is exceeded" },
  {
    async createTask({ taskStore, taskRequestedTtl }) {
      const task = await taskStore.createTask({ ttl: taskRequestedTtl });
      setTimeout(async () => {
        await taskStore.storeTaskResult(task.taskId, "failed", {
          content: [{ type: "text", text: "export failed: quota exceeded for project 7" }],
          isError: true,
        });
      }, 50);
      return { task };
    },
    async getTask({ taskId, taskStore }) {
      return await taskStore.getTask(taskId);
    },
    async getTaskResult({ taskId, taskStore }) {
      return await taskStore.getTaskResult(taskId);
    },
  },
);

await server.connect(new StdioServerTransport());
// The task store's TTL timers would keep Node running for a minute after the
// client is gone: the end of stdin is the end of the server.
process.stdin.on("end", () => process.exit(0));
