// withToolErrors around a transport written here, which records what the
// server sends and lets the test play the client: the options, the members
// forwarded, and the calls followed (cancelled by the client, answered late,
// ids reused).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { withToolErrors } from 'mcp-tool-errors';

/** A server transport with every member of the SDK's interface, v1 and v2, and one of its own. */
class RecordingTransport {
  #started = false;
  sent = [];
  sessionId = 'session-1';
  hasPerRequestStream = false;
  async start() {
    this.#started = true;
  }
  async send(message, options) {
    this.sent.push({ message, options });
  }
  async close() {
    this.onclose?.();
  }
  setProtocolVersion(version) {
    this.protocolVersion = version;
  }
  setSupportedProtocolVersions(versions) {
    this.supported = versions;
  }
  get started() {
    return this.#started;
  }
  handleRequest(request) {
    return `handled ${request} by ${this.sessionId}`;
  }
  /** The client sends `message`. */
  receive(message, extra) {
    this.onmessage?.(message, extra);
  }
}

/** A wrapped transport and what the server behind it received. */
function wrapped(options) {
  const transport = new RecordingTransport();
  const server = withToolErrors(transport, options);
  const received = [];
  server.onmessage = (message, extra) => received.push({ message, extra });
  return { transport, server, received };
}

const call = (id, name) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
const failed = (id, text) => ({ result: { content: [{ type: 'text', text }], isError: true }, jsonrpc: '2.0', id });

test('each option is checked, the error naming it', () => {
  const transport = new RecordingTransport();
  const cases = [
    [{ toolTimeot: 1000 }, /unknown option `toolTimeot`/],
    [{ toolTimeout: 0 }, /`toolTimeout` must be a whole number of milliseconds from 1 to 2147483647, not 0/],
    [{ toolTimeout: 1.5 }, /`toolTimeout`/],
    [{ toolTimeout: '30s' }, /`toolTimeout`/],
    [{ toolTimeout: 2 ** 31 }, /`toolTimeout`/],
    [{ toolTimeouts: { deploy: -1 } }, /`toolTimeouts.deploy`/],
    [{ toolTimeouts: [300] }, /`toolTimeouts` must be an object/],
    [{ redactSecrets: 'yes' }, /`redactSecrets` must be true or false/],
    [{ maxErrorBytes: 0 }, /`maxErrorBytes` must be a whole number of bytes/],
    [null, /options must be an object/],
  ];
  for (const [options, message] of cases) {
    assert.throws(() => withToolErrors(transport, options), message, JSON.stringify(options));
  }
  withToolErrors(transport);
  withToolErrors(transport, { toolTimeout: undefined, toolTimeouts: { deploy: 2 ** 31 - 1 }, redactSecrets: false, maxErrorBytes: 1 });
});

test('every member of the transport is its own, the optional ones too', async () => {
  const transport = new RecordingTransport();
  const server = withToolErrors(transport, { toolTimeout: 20 });
  // The server's callbacks read back as the server set them, after wrapping.
  assert.equal(server.onmessage, undefined);
  assert.equal(server.onclose, undefined);
  const onmessage = () => {};
  server.onmessage = onmessage;
  assert.equal(server.onmessage, onmessage);
  await server.start();
  assert.equal(transport.started, true);
  assert.equal(server.sessionId, 'session-1');
  assert.equal(server.hasPerRequestStream, false);
  server.setProtocolVersion('2025-11-25');
  server.setSupportedProtocolVersions(['2025-11-25']);
  assert.equal(transport.protocolVersion, '2025-11-25');
  assert.deepEqual(transport.supported, ['2025-11-25']);
  assert.equal(server.handleRequest('GET'), 'handled GET by session-1');
  const onerror = () => {};
  server.onerror = onerror;
  assert.equal(transport.onerror, onerror);
  transport.sessionId = 'session-2';
  assert.equal(server.sessionId, 'session-2');
  let closed = 0;
  const onclose = () => closed++;
  server.onclose = onclose;
  assert.equal(server.onclose, onclose);
  // Closed with a call in flight: its timer goes with the transport.
  transport.receive(call(1, 'hang'));
  await server.close();
  assert.equal(closed, 1);
  await sleep(60);
  assert.deepEqual(transport.sent, []);
});

test('a tool error is rewrapped; a success, another answer and a message of the server pass as they are', async () => {
  const { transport, server } = wrapped({});
  transport.receive(call(1, 'deploy'));
  transport.receive(call(2, 'deploy'));
  transport.receive({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
  const success = { result: { content: [{ type: 'text', text: 'done' }] }, jsonrpc: '2.0', id: 2 };
  const notification = { method: 'notifications/message', params: { level: 'info', data: 'x' }, jsonrpc: '2.0' };
  const other = failed(3, 'not a tool call');
  await server.send(failed(1, 'no such env'), { relatedRequestId: 1 });
  await server.send(success);
  await server.send(notification);
  await server.send(other);
  assert.deepEqual(transport.sent[0], {
    message: failed(1, '<error tool="deploy">\nno such env\n</error>'),
    options: { relatedRequestId: 1 },
  });
  assert.equal(transport.sent[1].message, success);
  assert.equal(transport.sent[2].message, notification);
  assert.equal(transport.sent[3].message, other);
});

test('a call not answered in time: answered, cancelled in the server, its late answer dropped', async () => {
  const { transport, server, received } = wrapped({ toolTimeouts: { hang: 20 } });
  const extra = { requestInfo: { headers: {} } };
  transport.receive(call('a', 'hang'), extra);
  await sleep(60);
  assert.equal(transport.sent.length, 1);
  assert.equal(
    JSON.stringify(transport.sent[0].message),
    '{"id":"a","jsonrpc":"2.0","result":{"content":[{"text":"<error tool=\\"hang\\">\\nThe tool did not finish within 0.02 s and was cancelled.\\n</error>","type":"text"}],"isError":true}}',
  );
  assert.deepEqual(transport.sent[0].options, { relatedRequestId: 'a' });
  assert.deepEqual(received.at(-1), {
    message: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a', reason: "The client's tool timeout expired." } },
    extra,
  });
  await server.send(failed('a', 'a late answer'));
  assert.equal(transport.sent.length, 1);
  // The id again, a new call: followed as any.
  transport.receive(call('a', 'deploy'));
  await server.send(failed('a', 'second'));
  assert.equal(transport.sent[1].message.result.content[0].text, '<error tool="deploy">\nsecond\n</error>');
});

test('a call the client cancels is not answered at its timeout', async () => {
  const { transport } = wrapped({ toolTimeout: 20 });
  transport.receive(call(7, 'hang'));
  transport.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
  await sleep(60);
  assert.deepEqual(transport.sent, []);
});

test('a call answered in time has no timer left; a closed transport none either', async () => {
  const { transport, server } = wrapped({ toolTimeout: 20 });
  transport.receive(call(1, 'quick'));
  await server.send({ result: { content: [] }, jsonrpc: '2.0', id: 1 });
  transport.receive(call(2, 'hang'));
  await server.close();
  await sleep(60);
  assert.equal(transport.sent.length, 1);
});

test('a timer of a call in flight keeps no process alive', () => {
  const program = `
    const { withToolErrors } = require('mcp-tool-errors');
    const transport = { async start() {}, async send() {}, async close() {} };
    withToolErrors(transport, { toolTimeout: 600000 });
    transport.onmessage({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'hang' } });
  `;
  const run = spawnSync(process.execPath, ['-e', program], { cwd: import.meta.dirname, timeout: 20_000 });
  assert.equal(run.signal, null, 'the process ended by itself');
  assert.equal(run.status, 0, String(run.stderr));
});

test('a request of the server with the id of a call in flight passes untouched, and its answer answers no call', async () => {
  const { transport, server, received } = wrapped({});
  transport.receive(call(1, 'deploy'));
  const request = { jsonrpc: '2.0', id: 1, method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } };
  await server.send(request);
  const answer = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'x' }], isError: true } };
  transport.receive(answer);
  assert.equal(received.at(-1).message, answer);
  await server.send(failed(1, 'no such env'));
  assert.equal(transport.sent[0].message, request);
  assert.equal(transport.sent[1].message.result.content[0].text, '<error tool="deploy">\nno such env\n</error>');
});

test('the package loads as CommonJS and as an ES module, the same function', () => {
  const require = createRequire(import.meta.url);
  assert.equal(require('mcp-tool-errors').withToolErrors, withToolErrors);
});

test('a call the layer cannot read (a lone surrogate in its id or tool) passes untouched, as through the command, and the process lives', async () => {
  const { transport, server, received } = wrapped({ toolTimeout: 20 });
  transport.receive(call('x\ud800', 'hang'));
  transport.receive(call(2, 'fail\udc00'));
  await sleep(60);
  assert.deepEqual(transport.sent, []);
  assert.equal(received.length, 2);
  const raw = failed(2, 'no such env');
  await server.send(raw);
  assert.equal(transport.sent[0].message, raw);
});

test('an answer to a call the client cancelled is dropped, as the command drops it', async () => {
  const { transport, server } = wrapped({});
  transport.receive(call(7, 'leak'));
  transport.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
  await server.send(failed(7, 'password=hunter2'));
  assert.deepEqual(transport.sent, []);
});

test('a failure of the layer is the promise of `send` or the transport\'s `onerror`, never thrown', async () => {
  const { transport, server } = wrapped({});
  transport.receive(call(1, 'big'));
  const answer = failed(1, 'x');
  answer.result.count = 1n;
  const sent = server.send(answer);
  assert.ok(sent instanceof Promise);
  await assert.rejects(sent, TypeError);
});

test('a request whose id is in use is refused as the command refuses it, and never reaches the server', async () => {
  const { transport, server, received } = wrapped({ redactSecrets: true });
  transport.receive(call(1, 'leak'));
  transport.receive({ jsonrpc: '2.0', id: 1, method: 'ping' });
  transport.receive(call(1, 'other'));
  assert.equal(received.length, 1);
  await server.send(failed(1, 'password=hunter2'));
  assert.deepEqual(
    transport.sent.map(({ message }) => JSON.stringify(message)),
    [
      '{"error":{"code":-32600,"message":"Invalid request: id 1 is already in use."},"id":1,"jsonrpc":"2.0"}',
      '{"error":{"code":-32600,"message":"Invalid request: id 1 is already in use."},"id":1,"jsonrpc":"2.0"}',
      '{"result":{"content":[{"type":"text","text":"<error tool=\\"leak\\">\\npassword=[REDACTED]\\n</error>"}],"isError":true},"jsonrpc":"2.0","id":1}',
    ],
  );
  // Answered, the id is free again; "1" is another id.
  transport.receive({ jsonrpc: '2.0', id: 1, method: 'ping' });
  transport.receive({ jsonrpc: '2.0', id: '1', method: 'ping' });
  assert.equal(received.length, 3);
});
