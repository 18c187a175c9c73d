//! Silences the default panic hook for panics the tests cause on purpose.

use std::sync::Once;

/// Installs, once per test binary, a panic hook that stays silent for the panics
/// tests raise on purpose (from `tests/support/`, or whose message starts with
/// `[expected]`, so that a failed assertion quoting such a message still shows) and prints every other one as usual.
pub fn silence_expected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            let from_support = info
                .location()
                .is_some_and(|at| at.file().replace('\\', "/").contains("tests/support/"));
            let expected = from_support || message.is_some_and(|m| m.starts_with("[expected]"));
            if !expected {
                default(info);
            }
        }));
    });
}
