//! A panic payload holding a fake secret, and the checks that it reaches the
//! server log and nothing the client receives.

use super::log::CapturedLog;

/// A fake secret, as a handler might format into a panic message.
pub const SECRET: &str = "sk-live-7Hq2Zx9PvB4nLw0T";

/// Panics as a handler that formatted a credential into its message would.
pub fn panic_with_secret<T>() -> T {
    panic!("[expected] connecting with token={SECRET} failed")
}

/// The parts of the panic payload found in `sent`.
pub fn payload_parts_in(sent: &str) -> Vec<&'static str> {
    let parts = [
        SECRET,
        "7Hq2Zx9PvB4nLw0T",
        "sk-live",
        "token=",
        "[expected]",
        "connecting with",
    ];
    parts
        .into_iter()
        .filter(|part| sent.contains(part))
        .collect()
}

/// Fails the test if any part of the panic payload is in `sent`.
#[track_caller]
pub fn assert_nothing_of_the_payload_in(sent: &str) {
    let found = payload_parts_in(sent);
    assert!(
        found.is_empty(),
        "{found:?} of the panic payload reached the client: {}",
        sent
    );
}

/// Log assertions of the leak tests.
pub trait PanicLog {
    fn assert_panic_logged(&self, tool: Option<&str>, id: &str);
}

impl PanicLog for CapturedLog {
    /// Checks that the log has an error event for the panic answered for `id`
    /// (and `tool`, for a `tools/call`), with the payload in it.
    /// `id` is as JSON writes it, the way every message type logs it.
    #[track_caller]
    fn assert_panic_logged(&self, tool: Option<&str>, id: &str) {
        let lines = self.lines();
        let event = lines.iter().find(|line| {
            line.contains("handler panicked; answering with an error")
                && line.contains(&format!(" id={id} "))
                && tool.is_none_or(|tool| line.contains(&format!("tool=\"{tool}\"")))
        });
        let event = event.unwrap_or_else(|| {
            panic!(
                "no error event for {tool:?} (id {id}) in\n{}",
                &lines.join("\n")
            )
        });
        assert!(event.contains("ERROR"), "{}", event);
        assert!(
            event.contains(SECRET),
            "the payload is not in the log: {}",
            event
        );
        if tool.is_none() {
            assert!(!event.contains("tool="), "{}", event);
        }
    }
}
