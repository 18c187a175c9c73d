//! The settings shared by the layer, the service and every response future.
//! What the layer does with them to a text the model reads is `crate::rewrap`.

use crate::sanitize::Sanitizer;
use crate::timeout::Timeouts;

/// What the layer was configured with.
///
/// Cloning is a copy unless a scrubber is set (then one reference count).
#[derive(Clone, Default)]
pub(crate) struct Config<R> {
    pub(crate) renderer: R,
    pub(crate) expose_panic_messages: bool,
    /// Cheap to clone: without a per-tool timeout there is nothing to share.
    pub(crate) timeouts: Timeouts,
    pub(crate) sanitizer: Sanitizer,
    /// `network.transport` of the request span, when the layer was told.
    pub(crate) network_transport: Option<&'static str>,
}

impl<R> std::fmt::Debug for Config<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("renderer", &std::any::type_name::<R>())
            .field("expose_panic_messages", &self.expose_panic_messages)
            .field("timeouts", &self.timeouts)
            .field("sanitizer", &self.sanitizer)
            .field("network_transport", &self.network_transport)
            .finish()
    }
}
