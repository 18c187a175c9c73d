//! [`ToolErrorLayer`]: the layer users add, and its builder methods.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use tower_layer::Layer;

use crate::config::Config;
use crate::render::{ErrorRenderer, Llmxml};
use crate::service::ToolErrors;
use crate::tasks::TaskMemory;
use crate::telemetry::ToolNames;

/// Wraps a service in [`ToolErrors`]: tool errors are rewrapped for the model and
/// panics become answers.
///
/// Cheap to clone: it holds the renderer, a few flags and values, and shares
/// what is not a plain value (the per-tool timeouts, a
/// [`redact_with`](Self::redact_with) closure, the memory of tasks, the tool
/// names its metric records) behind `Arc`s. It is not `Copy`.
///
/// Every service this layer builds, and every service built by a clone of it,
/// shares one memory of task-augmented calls: a task created through one
/// service has its result rewrapped when it is delivered through another (a
/// server that builds one service per session, polled from a new session).
/// Layers made with [`ToolErrorLayer::new`] separately remember separately.
///
/// ```
/// use std::time::Duration;
/// use mcp_tool_errors::ToolErrorLayer;
///
/// let layer = ToolErrorLayer::new()
///     .expose_panic_messages(true)
///     .tool_timeout(Duration::from_secs(30))
///     .tool_timeout_for("deploy", Duration::from_secs(300));
/// # let _ = layer;
/// ```
#[derive(Clone, Default)]
pub struct ToolErrorLayer<R = Llmxml> {
    config: Config<R>,
    tasks: TaskMemory,
    /// The tool names the metric records, shared like the memory of tasks.
    tool_names: ToolNames,
}

impl ToolErrorLayer {
    /// The default layer: llmxml rendering, panic messages kept out of responses.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<R> ToolErrorLayer<R> {
    /// Whether the panic payload (when it is a string) is sent to the client.
    ///
    /// Off by default: a payload can hold secrets (tokens in a formatted request,
    /// paths, user data). It always goes to the `tracing` log.
    pub fn expose_panic_messages(mut self, expose: bool) -> Self {
        self.config.expose_panic_messages = expose;
        self
    }

    /// Answers every `tools/call` not answered within `timeout`: with an
    /// `isError` result whose text is `The tool did not finish within D and was
    /// cancelled.`, rendered like any error. The handler's future is dropped then
    /// (so the tool stops at its next await point), and with rmcp the request's
    /// cancellation token is cancelled.
    ///
    /// Only `tools/call` is timed; a batch is bounded by the shortest timeout of
    /// its `tools/call`. No timeout by default. A timeout needs a tokio runtime
    /// with its time driver (tokio's `time` feature and `enable_time`).
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.config.timeouts.set_every_tool(timeout);
        self
    }

    /// Gives the tool named `tool` a timeout of its own, in place of
    /// [`tool_timeout`](Self::tool_timeout); call it once per tool.
    pub fn tool_timeout_for(mut self, tool: impl Into<String>, timeout: Duration) -> Self {
        self.config.timeouts.set_for_tool(tool.into(), timeout);
        self
    }

    /// Whether credentials are replaced by `[REDACTED]` in every text the layer
    /// renders: tool errors, exposed panic messages, the text it inserts, and the
    /// panic payload in its `tracing` event.
    ///
    /// Off by default, so that the output is the tool's text exactly. The
    /// built-in patterns (Authorization headers, URL passwords, secret query and
    /// form parameters, AWS, GitHub, Slack, OpenAI / Anthropic / Stripe and Google
    /// keys, JWTs, PEM private keys) are listed in the repository's
    /// `docs/sanitizing.md`. They run only on error texts, never on a successful result.
    ///
    /// Needs the cargo feature `redact`, which brings the regex engine that runs
    /// the patterns; [`redact_with`](Self::redact_with) and
    /// [`max_error_bytes`](Self::max_error_bytes) need no feature.
    ///
    /// ```
    /// use mcp_tool_errors::ToolErrorLayer;
    ///
    /// let layer = ToolErrorLayer::new().redact_secrets(true);
    /// # let _ = layer;
    /// ```
    #[cfg(feature = "redact")]
    #[cfg_attr(docsrs, doc(cfg(feature = "redact")))]
    pub fn redact_secrets(mut self, redact: bool) -> Self {
        self.config.sanitizer.redact_secrets = redact;
        self
    }

    /// Runs `scrubber` over every text the layer renders, after the built-in
    /// redaction when that is on too; return the text borrowed when it is clean.
    ///
    /// A scrubber that panics does not take the request down: the `tools/call`
    /// it was scrubbing for is answered with the built-in llmxml element of
    /// `The tool failed and its error could not be rendered. The details are in
    /// the server log.`, and the panic is logged (its payload withheld, since the
    /// scrubber was to clean it).
    ///
    /// ```
    /// use std::borrow::Cow;
    /// use mcp_tool_errors::ToolErrorLayer;
    ///
    /// let layer = ToolErrorLayer::new().redact_with(|text: &str| {
    ///     if text.contains("internal.corp") {
    ///         Cow::Owned(text.replace("internal.corp", "[host]"))
    ///     } else {
    ///         Cow::Borrowed(text)
    ///     }
    /// });
    /// # let _ = layer;
    /// ```
    pub fn redact_with<F>(mut self, scrubber: F) -> Self
    where
        F: Fn(&str) -> Cow<'_, str> + Send + Sync + 'static,
    {
        self.config.sanitizer.scrubber = Some(Arc::new(scrubber));
        self
    }

    /// Cuts every error text to at most `max_bytes` bytes before it is rendered,
    /// followed by ` … [truncated N bytes]` (`N`: the bytes removed).
    ///
    /// The limit counts the kept message as the renderer receives it, without
    /// the suffix: for [`Llmxml`], the body it shows (each `<` of an `<error` /
    /// `</error` as the 4 bytes of `&lt;`); for any other renderer, the plain
    /// text. The cut falls on a character boundary and never splits a guard.
    ///
    /// Whatever a text ends with, what the renderer receives is at most
    /// `max_bytes` and one suffix, of at most 43 bytes (`N` has at most 20
    /// digits). A text that is already the cap's output for this limit (a
    /// stacked layer, an element another layer rendered) is left as it is, so
    /// nothing is cut or wrapped twice.
    ///
    /// ```
    /// use mcp_tool_errors::ToolErrorLayer;
    ///
    /// let layer = ToolErrorLayer::new().max_error_bytes(16 * 1024);
    /// # let _ = layer;
    /// ```
    pub fn max_error_bytes(mut self, max_bytes: usize) -> Self {
        self.config.sanitizer.max_error_bytes = Some(max_bytes);
        self
    }

    /// Remembers at most `max` task-augmented calls (default 1024); past it,
    /// a new task pushes out the least recently used (created, or its result
    /// delivered), whose result then reaches the client as the tool made it.
    ///
    /// A remembered task's result is rewrapped on every delivery (`tasks/get`
    /// retried, `tasks/result` after a `tasks/get` that said `failed` or
    /// `completed`, repeated) until the task is forgotten: once its time to
    /// live (`ttlMs`) has passed, or when newer tasks push it out. No status
    /// and no error answering a poll forgets it. The bound matters for clients
    /// that create tasks faster than their TTLs expire; the panics of task
    /// operations waiting for their delivery are bounded alike. `0` remembers
    /// none, so no task result is rewrapped.
    ///
    /// This gives the layer a new, empty memory: call it before cloning the
    /// layer, so that every clone shares it.
    ///
    /// ```
    /// use mcp_tool_errors::ToolErrorLayer;
    ///
    /// let layer = ToolErrorLayer::new().max_remembered_tasks(16 * 1024);
    /// # let _ = layer;
    /// ```
    pub fn max_remembered_tasks(mut self, max: usize) -> Self {
        self.tasks = TaskMemory::bounded(max);
        self
    }

    /// Records `transport` as `network.transport` on every request span: the
    /// transport the served MCP session runs over, by the conventions `pipe` for
    /// stdio and `tcp` (or `quic`) for HTTP. Not recorded by default: a layer
    /// does not know what carries its messages.
    ///
    /// ```
    /// use mcp_tool_errors::ToolErrorLayer;
    ///
    /// // A server that answers on its standard input and output.
    /// let layer = ToolErrorLayer::new().network_transport("pipe");
    /// # let _ = layer;
    /// ```
    pub fn network_transport(mut self, transport: &'static str) -> Self {
        self.config.network_transport = Some(transport);
        self
    }

    /// Renders errors with `renderer` instead of [`Llmxml`].
    ///
    /// A renderer that panics does not take the request down: the `tools/call`
    /// it was rendering for is answered with the built-in
    /// [`render_error`](crate::render_error)`(tool, "The tool failed and its
    /// error could not be rendered. The details are in the server log.")`, and
    /// the panic is logged by its location, its payload withheld (it may quote
    /// the text being rendered).
    ///
    /// ```
    /// use mcp_tool_errors::ToolErrorLayer;
    ///
    /// let layer = ToolErrorLayer::new()
    ///     .renderer(|tool: &str, message: &str| format!("{tool} failed: {message}"));
    /// # let _ = layer;
    /// ```
    pub fn renderer<R2: ErrorRenderer>(self, renderer: R2) -> ToolErrorLayer<R2> {
        ToolErrorLayer {
            config: Config {
                renderer,
                expose_panic_messages: self.config.expose_panic_messages,
                timeouts: self.config.timeouts,
                sanitizer: self.config.sanitizer,
                network_transport: self.config.network_transport,
            },
            tasks: self.tasks,
            tool_names: self.tool_names,
        }
    }
}

impl<R> ToolErrorLayer<R> {
    /// What the layer was configured with, for what it does outside a service
    /// (`crate::result_at_hand`).
    pub(crate) fn config(&self) -> &Config<R> {
        &self.config
    }
}

impl<R> std::fmt::Debug for ToolErrorLayer<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolErrorLayer")
            .field("config", &self.config)
            .field("tasks", &self.tasks)
            .finish()
    }
}

impl<S, R: Clone> Layer<S> for ToolErrorLayer<R> {
    type Service = ToolErrors<S, R>;

    fn layer(&self, inner: S) -> Self::Service {
        // One memory per layer value: a task created through one service is
        // recognised when another service of the same layer delivers it.
        ToolErrors::from_parts(
            inner,
            self.config.clone(),
            self.tasks.clone(),
            self.tool_names.clone(),
        )
    }
}
