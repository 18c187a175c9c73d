'use strict';
// `withToolErrors`: a server transport of the official TypeScript MCP SDK (v1
// `@modelcontextprotocol/sdk`, v2 `@modelcontextprotocol/server`) with the
// mcp-tool-errors layer between it and the server. What the layer says and
// decides comes from the addon (src/lib.rs); this file only follows the
// requests in flight: which ids are in use, which is a `tools/call` of which
// tool, and its timer.

const { Layer, cancellation, idInUse, readable } = require('./binding.cjs');

// setTimeout's longest delay; a longer one would fire at once.
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
// The most ids given up at their timeout whose late answer is still awaited.
const MAX_GIVEN_UP = 1024;

/**
 * Wraps `transport` so that the server behind it answers as the layer would:
 * each tool error rewrapped, each tool call not answered within its timeout
 * answered then and cancelled in the server. Every other member is the
 * transport's own.
 */
function withToolErrors(transport, options) {
  const layer = new Layer(layerOptions(options === undefined ? {} : options));
  return new Proxy(transport, new ToolErrors(transport, layer));
}

/** The options, checked: each error names the key at fault. */
function layerOptions(options) {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError('withToolErrors: options must be an object');
  }
  const known = ['toolTimeout', 'toolTimeouts', 'redactSecrets', 'maxErrorBytes'];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new TypeError(`withToolErrors: unknown option \`${key}\` (known: ${known.join(', ')})`);
    }
  }
  const { toolTimeout, toolTimeouts, redactSecrets, maxErrorBytes } = options;
  if (redactSecrets !== undefined && typeof redactSecrets !== 'boolean') {
    throw new TypeError('withToolErrors: `redactSecrets` must be true or false');
  }
  if (toolTimeouts !== undefined && (typeof toolTimeouts !== 'object' || toolTimeouts === null || Array.isArray(toolTimeouts))) {
    throw new TypeError('withToolErrors: `toolTimeouts` must be an object of tool names and milliseconds');
  }
  return {
    toolTimeout: whole('toolTimeout', toolTimeout, MAX_TIMEOUT_MS, 'milliseconds'),
    toolTimeouts: Object.entries(toolTimeouts ?? {}).map(([tool, ms]) => ({
      tool,
      milliseconds: whole(`toolTimeouts.${tool}`, ms, MAX_TIMEOUT_MS, 'milliseconds'),
    })),
    redactSecrets,
    maxErrorBytes: whole('maxErrorBytes', maxErrorBytes, 2 ** 32 - 1, 'bytes'),
  };
}

/** `value`, a whole number from 1 to `max`, or undefined. */
function whole(key, value, max, unit) {
  if (value === undefined || (Number.isInteger(value) && value >= 1 && value <= max)) return value;
  throw new RangeError(`withToolErrors: \`${key}\` must be a whole number of ${unit} from 1 to ${max}, not ${String(value)}`);
}

/** The proxy's handler: the wrapped transport's state and its three changed members. */
class ToolErrors {
  constructor(transport, layer) {
    this.transport = transport;
    this.layer = layer;
    /**
     * The client's requests not answered yet, by id: a `tools/call` the layer
     * follows as its tool, timer and `extra`; any other request as `null`.
     */
    this.requests = new Map();
    /** Ids given up (answered at their timeout, or cancelled by the client), whose late answer is dropped. */
    this.givenUp = new Set();
    /** The server's callbacks, called from the transport's, which are this handler's. */
    this.serverOnMessage = transport.onmessage;
    this.serverOnClose = transport.onclose;
    transport.onmessage = this.receive;
    transport.onclose = this.closed;
    /** The transport's methods, bound to it (a proxy is not the object its private fields are on). */
    this.methods = new Map();
  }

  get(transport, key) {
    if (key === 'send') return this.send;
    if (key === 'onmessage') return this.serverOnMessage;
    if (key === 'onclose') return this.serverOnClose;
    const value = Reflect.get(transport, key);
    if (typeof value !== 'function' || Object.hasOwn(transport, key)) return value;
    let method = this.methods.get(key);
    if (method?.of !== value) this.methods.set(key, (method = { of: value, bound: value.bind(transport) }));
    return method.bound;
  }

  set(transport, key, value) {
    if (key === 'onmessage') {
      this.serverOnMessage = value;
    } else if (key === 'onclose') {
      this.serverOnClose = value;
    } else {
      return Reflect.set(transport, key, value);
    }
    return true;
  }

  /**
   * A message from the client, to the server: a request is remembered until
   * answered, a `tools/call` followed; a request whose id is in use is
   * refused, as the command refuses it, and never reaches the server.
   */
  receive = (message, extra) => {
    if (message.method !== undefined && message.id !== undefined) {
      if (this.requests.has(message.id) && this.refused(message.id)) return;
      this.givenUp.delete(message.id);
      const call = message.method === 'tools/call' ? this.follow(message.id, message.params?.name, extra) : null;
      this.requests.set(message.id, call);
    } else if (message.method === 'notifications/cancelled' && message.id === undefined) {
      const id = message.params?.requestId;
      if (this.requests.has(id)) {
        this.forget(id);
        this.giveUp(id);
      }
    }
    this.serverOnMessage?.(message, extra);
  };

  /** The call to follow, or `null` for one the layer leaves alone. */
  follow(id, tool, extra) {
    // A call the library cannot read (a lone surrogate in its id or tool) is
    // not followed: the command passes it untouched too.
    if (typeof tool !== 'string' || !readable(JSON.stringify(id)) || !readable(JSON.stringify(tool))) return null;
    const timeout = this.layer.timeoutOf(tool);
    const call = { tool, extra, timer: undefined };
    if (timeout !== null) {
      call.timer = setTimeout(() => this.timedOut(id, call), timeout);
      call.timer.unref?.();
    }
    return call;
  }

  /**
   * Answers a request whose id is in use with the command's refusal; `false`
   * when the library cannot read the id, whose request then passes as through
   * the command.
   */
  refused(id) {
    if (!readable(JSON.stringify(id))) return false;
    const refusal = JSON.parse(idInUse(JSON.stringify(id)));
    Promise.resolve(this.transport.send(refusal, { relatedRequestId: id })).catch((error) => this.transport.onerror?.(error));
    return true;
  }

  /** The request `id`, no longer awaited: its call, if the layer followed it. */
  forget(id) {
    const call = this.requests.get(id);
    this.requests.delete(id);
    if (call) clearTimeout(call.timer);
    return call ?? undefined;
  }

  /** A message from the server: an answer to a `tools/call` goes through the layer. */
  send = (message, options) => {
    if (message.method === undefined && message.id !== undefined) {
      if (this.givenUp.delete(message.id)) return Promise.resolve();
      const call = this.forget(message.id);
      if (call !== undefined && message.result?.isError === true) {
        try {
          message = this.rewrapped(message, call.tool);
        } catch (error) {
          // As `send` fails, not thrown at its caller: the SDK reports it.
          return Promise.reject(error);
        }
      }
    }
    return this.transport.send(message, options);
  };

  /** `message`, the server's answer to a call of `tool`, with its result as the layer rewraps it. */
  rewrapped(message, tool) {
    const rewrapped = this.layer.rewrapResult(tool, JSON.stringify(message.result));
    return rewrapped === null ? message : { ...message, result: JSON.parse(rewrapped) };
  }

  /** The layer's answer to a call at its timeout, then the call cancelled in the server. */
  timedOut(id, call) {
    this.forget(id);
    this.giveUp(id);
    // A timer's callback: what fails is the transport's error, never the process's.
    const failed = (error) => this.transport.onerror?.(error);
    try {
      const answer = JSON.parse(this.layer.timedOutAnswer(JSON.stringify(id), call.tool));
      Promise.resolve(this.transport.send(answer, { relatedRequestId: id })).catch(failed);
      this.serverOnMessage?.(JSON.parse(cancellation(JSON.stringify(id))), call.extra);
    } catch (error) {
      failed(error);
    }
  }

  /** `id`'s late answer is to be dropped. */
  giveUp(id) {
    this.givenUp.add(id);
    if (this.givenUp.size > MAX_GIVEN_UP) this.givenUp.delete(this.givenUp.values().next().value);
  }

  closed = () => {
    for (const call of this.requests.values()) if (call) clearTimeout(call.timer);
    this.requests.clear();
    this.givenUp.clear();
    this.serverOnClose?.();
  };
}

module.exports = { withToolErrors };
