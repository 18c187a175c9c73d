// The client's answers through withToolErrors equal, byte for byte, what the
// mcp-tool-errors command writes in front of the same server without it.
//
//   node tests/same_bytes.mjs sdk1-stdio|sdk1-http|sdk2-stdio COMMAND
//
// The official client of the SDK line calls each tool of servers/tools.mjs in
// turn against three servers: the bare one, the one whose transport is
// wrapped, and the bare one behind COMMAND (the oracle) with the same
// options. Every message the client receives is recorded as its bytes (each
// line of stdio; each HTTP response body). The wrapped server's record must
// equal the command's whole; the bare server's must differ only in the answers
// to the tools that fail. Prints the case table; exits 1 on a difference.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';

const [setup, command] = process.argv.slice(2);
const [line, transportKind] = setup?.split('-') ?? [];
if (!['sdk1', 'sdk2'].includes(line) || !['stdio', 'http'].includes(transportKind) || !command) {
  throw new Error('usage: node tests/same_bytes.mjs sdk1-stdio|sdk1-http|sdk2-stdio COMMAND');
}
const sdk = line === 'sdk1'
  ? {
      ...(await import('@modelcontextprotocol/sdk/client/index.js')),
      ...(await import('@modelcontextprotocol/sdk/client/stdio.js')),
      ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
    }
  : { ...(await import('@modelcontextprotocol/client')), ...(await import('@modelcontextprotocol/client/stdio')) };
const server = new URL(`servers/${line}.mjs`, import.meta.url).pathname;

// The same options both ways.
const OPTIONS = { toolTimeout: 10_000, toolTimeouts: { hang: 300 }, redactSecrets: true, maxErrorBytes: 4096 };
const COMMAND_OPTIONS = ['--tool-timeout', '10s', '--tool-timeout-for', 'hang=300ms', '--redact-secrets', '--max-error-bytes', '4096'];
// How long the client waits for an answer: the bare server never answers
// `hang`, so there the client gives up soon; elsewhere the layer must answer
// it long before.
const CLIENT_TIMEOUT_MS = { bare: 1000, wrapped: 10_000, command: 10_000 };
const BOUND_MS = 60_000;

// The calls, in order, and which of them fail (the cases the layer answers).
const CALLS = ['fail', 'leak', 'imitate', 'other', 'long', 'bare', 'picture', 'echo', 'chatty', 'hang', 'status'];
const FAILING = new Set(['fail', 'leak', 'imitate', 'other', 'long', 'bare', 'picture', 'hang']);
const CASES = {
  fail: 'an isError result',
  leak: 'a thrown error with a secret',
  imitate: 'an imitation of the element',
  other: 'an element naming another tool',
  long: 'a text past maxErrorBytes',
  bare: 'an isError result with no text',
  picture: 'an isError image with no text',
  echo: 'a success',
  chatty: 'a success after a log and a ping',
  hang: 'a hang',
  status: 'the hang, as the server saw it',
};

const children = [];
process.on('exit', () => children.forEach((child) => child.kill()));

/** Starts `argv` and resolves with the address it prints as `listening on ADDR`. */
function listening(argv, env) {
  const child = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let log = '';
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      log += chunk;
      const found = /listening on (\S+)/.exec(log);
      if (found) resolve(found[1]);
    });
    child.on('exit', (status) => reject(new Error(`${argv.join(' ')} exited (${status}): ${log}`)));
  });
}

/** A client transport whose received bytes are recorded in `record`. */
async function recordedTransport(argv, env, record) {
  if (transportKind === 'stdio') {
    const transport = new sdk.StdioClientTransport({ command: argv[0], args: argv.slice(1), env: { ...process.env, ...env }, stderr: 'ignore' });
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      transport._process.stdout.on('data', (chunk) => record.push(chunk));
    };
    return transport;
  }
  const address = await listening(argv, env);
  const recordingFetch = async (url, init) => {
    const response = await fetch(url, init);
    if (response.body === null) return response;
    const [client, recorded] = response.body.tee();
    record.push(read(recorded));
    return new Response(client, response);
  };
  return new sdk.StreamableHTTPClientTransport(new URL(`http://${address}/mcp`), { fetch: recordingFetch });
}

/** The bytes of `stream`, up to its end or until it is aborted (a GET stream, at the client's close). */
async function read(stream) {
  const chunks = [];
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch (error) {
    if (error.name !== 'AbortError') throw error;
  }
  return Buffer.concat(chunks);
}

/** The messages received, each as its bytes: the lines of stdio, or the JSON of each HTTP body (each SSE `data`). */
async function messages(record) {
  const chunks = await Promise.all(record);
  if (transportKind === 'stdio') return Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean);
  return chunks.flatMap((body) => {
    const text = body.toString('utf8');
    return text.startsWith('{') || text.startsWith('[')
      ? [text]
      : text.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice('data:'.length).trimStart()).filter(Boolean);
  });
}

/** Calls every tool through `argv` (a server, or the command in front of one); returns what the client got. */
async function session(name, argv, env = {}) {
  const record = [];
  const transport = await recordedTransport(argv, env, record);
  const client = new sdk.Client({ name: 'same-bytes', version: '1.0.0' });
  await client.connect(transport);
  const answers = {};
  for (const tool of CALLS) {
    try {
      const params = { name: tool, arguments: { path: '/data/1' } };
      const options = { timeout: CLIENT_TIMEOUT_MS[name] };
      // v1 takes a result schema before the options; v2 does not.
      const result = await (line === 'sdk1' ? client.callTool(params, undefined, options) : client.callTool(params, options));
      answers[tool] = result.content.map((item) => item.text).join('') || '(no text)';
    } catch (error) {
      answers[tool] = `(no answer: ${error.message})`;
    }
  }
  await client.close();
  const received = await messages(record);
  return { name, answers, received, raw: Buffer.concat(await Promise.all(record)) };
}

/** The message of `received` that answers the request `id`. */
const answerTo = (received, id) => received.filter((message) => JSON.parse(message).id === id && JSON.parse(message).method === undefined);

const http = transportKind === 'http';
const node = process.execPath;
const timer = setTimeout(() => { console.error(`${setup}: not done within ${BOUND_MS} ms`); process.exit(1); }, BOUND_MS);
const wrappedEnv = { TOOL_ERRORS_OPTIONS: JSON.stringify(OPTIONS) };
const bareServer = http ? [node, server, '--http'] : [node, server];
const bare = await session('bare', bareServer);
const wrapped = await session('wrapped', [...bareServer, '--wrap'], wrappedEnv);
const upstream = http ? await listening(bareServer) : undefined;
const oracle = await session('command', http
  ? [command, ...COMMAND_OPTIONS, '--upstream', `http://${upstream}/mcp`, '--listen', '127.0.0.1:0']
  : [command, ...COMMAND_OPTIONS, '--', ...bareServer]);
clearTimeout(timer);

const cell = (text) => JSON.stringify(text.length > 90 ? `${text.slice(0, 60)}…${text.slice(-25)}` : text).replaceAll('|', '\\|');
console.log(`\n${setup}: the text the client read, by case\n`);
console.log('| case | tool | without the wrapper | with it | the command |\n|---|---|---|---|---|');
for (const tool of CALLS) {
  console.log(`| ${CASES[tool]} | \`${tool}\` | ${cell(bare.answers[tool])} | ${cell(wrapped.answers[tool])} | ${cell(oracle.answers[tool])} |`);
}

// Byte for byte: every message the client received, the answers and all else.
assert.deepEqual(wrapped.received, oracle.received, 'the wrapped server and the command sent other bytes');
// The HTTP bodies too, but for one line: the command frames its own answer
// (the hang's) as an event without `event: message`, the SDK's transport with
// it; both are an event of the type `message` to the client.
const framed = (raw) => raw.toString('utf8').replaceAll('event: message\n', '');
if (http) assert.equal(framed(wrapped.raw), framed(oracle.raw), 'the HTTP bodies differ');
// Requests are numbered from 0 after initialize (id 0) in both SDK lines.
const idOf = (tool) => CALLS.indexOf(tool) + 1;
for (const tool of CALLS) {
  assert.equal(answerTo(wrapped.received, idOf(tool)).length, 1, `one answer to ${tool}`);
}
// Everything but the answers to failing tools passes untouched (and `status`,
// which tells how the hang ended: without the wrapper, by the client's timeout).
const untouched = (session) => session.received.filter((message) => {
  const { id, method } = JSON.parse(message);
  return !(method === undefined && [...FAILING, 'status'].some((tool) => idOf(tool) === id));
});
assert.deepEqual(untouched(wrapped), untouched(bare), 'a message besides the failing tools\' answers changed');
assert.match(wrapped.answers.status, /^hang: aborted: /, 'the hung call is cancelled in the server');
assert.equal(wrapped.answers.status, oracle.answers.status);
console.log(`\n${setup}: ${wrapped.received.length} messages, the same bytes through the wrapper as through the command`);
process.exit(0);
