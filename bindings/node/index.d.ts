/**
 * The options of {@link withToolErrors}. Every one is optional; without any,
 * tool errors are rewrapped and nothing else changes.
 */
export interface ToolErrorsOptions {
  /**
   * Answer a `tools/call` that the server has not answered after this many
   * milliseconds (a whole number, 1 or more) with an `isError` result, and
   * cancel it in the server: its handler's `AbortSignal` is aborted and its
   * late answer dropped.
   */
  toolTimeout?: number;
  /** The timeout of single tools, by name, in milliseconds, in place of `toolTimeout`. */
  toolTimeouts?: Record<string, number>;
  /** Replace secrets (tokens, keys, passwords) in tool error texts by `[REDACTED]`. */
  redactSecrets?: boolean;
  /** Cut the text of each tool error to at most this many bytes (1 or more). */
  maxErrorBytes?: number;
}

/**
 * What `withToolErrors` needs of a transport: the `Transport` interface of
 * `@modelcontextprotocol/sdk` 1.x and of `@modelcontextprotocol/server` 2.x.
 */
export interface ServerTransport {
  start(): Promise<void>;
  send(message: any, options?: any): Promise<void>;
  close(): Promise<void>;
  onmessage?: ((message: any, extra?: any) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
}

/**
 * `transport` with the mcp-tool-errors layer between it and the server: each
 * tool error rewrapped as `<error tool="NAME">` llmxml the model can read,
 * each tool call not answered within its timeout answered then and cancelled
 * in the server; a request whose id is in use refused, as the command refuses
 * it. Every other message, and every other member of the transport, is the
 * transport's own.
 *
 * ```ts
 * await server.connect(withToolErrors(new StdioServerTransport(), { toolTimeout: 30_000, redactSecrets: true }));
 * ```
 *
 * @throws {TypeError | RangeError} when an option is unknown or out of range; the message names it.
 */
export declare function withToolErrors<T extends ServerTransport>(transport: T, options?: ToolErrorsOptions): T;
