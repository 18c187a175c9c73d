//! What the model is allowed to read: credentials scrubbed from error texts
//! (`redact.rs`, feature `redact`), oversized texts cut (`cap.rs`), and panic
//! payloads kept off stderr (`panic_hook.rs`).
//!
//! All of it is opt-in on [`ToolErrorLayer`](crate::ToolErrorLayer); with every
//! option off, [`Sanitizer::apply`] hands the text back borrowed, so the default
//! output and cost are those of the bare renderer. The order is fixed: the
//! built-in redaction, then the user's scrubber, then the cap (cutting first
//! could split a secret so that no pattern recognises what is left of it).
//!
//! The built-in patterns need the cargo feature `redact` (a regex engine);
//! the user's scrubber and the cap are always there.
//!
//! ```
//! # #[cfg(feature = "redact")] {
//! use mcp_tool_errors::ToolErrorLayer;
//! use serde_json::json;
//! use tower::{Layer, Service, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let upstream = service_fn(|_request: serde_json::Value| async {
//!     Ok::<_, std::convert::Infallible>(json!({
//!         "jsonrpc": "2.0", "id": 1,
//!         "result": {"isError": true, "content": [{"type": "text",
//!             "text": "GET https://api.example.com/v1?api_key=s3cr3t failed: 401"}]},
//!     }))
//! });
//! let layer = ToolErrorLayer::new().redact_secrets(true).max_error_bytes(4096);
//! let response = layer
//!     .layer(upstream)
//!     .oneshot(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
//!                     "params": {"name": "fetch", "arguments": {}}}))
//!     .await
//!     .unwrap();
//! assert_eq!(
//!     response["result"]["content"][0]["text"],
//!     "<error tool=\"fetch\">\nGET https://api.example.com/v1?api_key=[REDACTED] failed: 401\n</error>",
//! );
//! # }
//! # }
//! ```

mod cap;
pub(crate) mod panic_hook;
#[cfg(feature = "redact")]
mod redact;

use std::borrow::Cow;
use std::sync::Arc;

pub(crate) use cap::Count;
pub use panic_hook::install_panic_hook;

/// What stands in the place of every secret the built-in patterns find; a cut
/// never splits it, so that a cut marker is not taken for a secret next time.
const REDACTED: &str = "[REDACTED]";

/// The user's own scrubber, shared by every clone of the layer.
pub(crate) type Scrubber = Arc<dyn Fn(&str) -> Cow<'_, str> + Send + Sync>;

/// The sanitizing settings of one layer.
#[derive(Clone, Default)]
pub(crate) struct Sanitizer {
    #[cfg(feature = "redact")]
    pub(crate) redact_secrets: bool,
    pub(crate) scrubber: Option<Scrubber>,
    pub(crate) max_error_bytes: Option<usize>,
}

/// What sanitizing did to the texts of one response: counts only, never the
/// text, so that the log cannot carry what was removed.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tally {
    /// Secrets replaced by the built-in patterns.
    pub(crate) redactions: usize,
    /// Texts the user's scrubber changed.
    pub(crate) scrubbed: usize,
    /// Bytes removed by the cap.
    pub(crate) bytes_cut: usize,
}

impl Sanitizer {
    /// Whether any option is on: only then can a text change.
    pub(crate) fn is_active(&self) -> bool {
        self.redacts() || self.scrubber.is_some() || self.max_error_bytes.is_some()
    }

    /// Whether the built-in patterns run.
    fn redacts(&self) -> bool {
        #[cfg(feature = "redact")]
        return self.redact_secrets;
        #[cfg(not(feature = "redact"))]
        false
    }

    /// `text` redacted, scrubbed and capped as configured, the cap counting it
    /// as `count` says; borrowed when nothing changed.
    ///
    /// Runs the user's scrubber: call it where a panic is caught.
    pub(crate) fn apply<'t>(&self, text: &'t str, count: Count, tally: &mut Tally) -> Cow<'t, str> {
        let scrubbed = self.scrub(text, tally);
        match self.max_error_bytes {
            Some(max) => {
                let (capped, cut) = cap::cap(scrubbed, max, count);
                tally.bytes_cut += cut;
                capped
            }
            None => scrubbed,
        }
    }

    /// `text` redacted and scrubbed, but not capped: what the log may show of a
    /// panic payload.
    ///
    /// Runs the user's scrubber: call it where a panic is caught.
    pub(crate) fn scrub<'t>(&self, text: &'t str, tally: &mut Tally) -> Cow<'t, str> {
        let redacted = self.redact(text, tally);
        let Some(scrubber) = &self.scrubber else {
            return redacted;
        };
        let (scrubbed, changed) = match redacted {
            Cow::Borrowed(text) => {
                let scrubbed = scrubber(text);
                let changed = scrubbed != text;
                (scrubbed, changed)
            }
            Cow::Owned(text) => {
                let scrubbed = scrubber(&text);
                if scrubbed == text.as_str() {
                    drop(scrubbed);
                    (Cow::Owned(text), false)
                } else {
                    (Cow::Owned(scrubbed.into_owned()), true)
                }
            }
        };
        if changed {
            tally.scrubbed += 1;
        }
        scrubbed
    }

    /// `text` with the built-in patterns applied, when they are on.
    #[cfg(feature = "redact")]
    fn redact<'t>(&self, text: &'t str, tally: &mut Tally) -> Cow<'t, str> {
        if !self.redact_secrets {
            return Cow::Borrowed(text);
        }
        let (redacted, count) = redact::redact_secrets(text);
        tally.redactions += count;
        redacted
    }

    #[cfg(not(feature = "redact"))]
    fn redact<'t>(&self, text: &'t str, _: &mut Tally) -> Cow<'t, str> {
        Cow::Borrowed(text)
    }
}

impl std::fmt::Debug for Sanitizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sanitizer")
            .field("redact_secrets", &self.redacts())
            .field(
                "scrubber",
                &self.scrubber.as_ref().map(|_| "Fn(&str) -> Cow<str>"),
            )
            .field("max_error_bytes", &self.max_error_bytes)
            .finish()
    }
}
