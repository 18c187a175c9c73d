//! The `tracing` output of the current thread, kept in memory for assertions.
//!
//! One global subscriber per test binary, at `DEBUG`, writes each event into the
//! buffer of the thread that logged it, if that thread is capturing. A global
//! subscriber rather than one scoped to each test: tracing caches per callsite
//! whether anyone listens, and with scoped subscribers on parallel test threads
//! that cache can be computed from a thread that listens to nothing, silently
//! dropping another test's events.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, Once};

type Buffer = Arc<Mutex<Vec<u8>>>;

thread_local! {
    static CAPTURE: RefCell<Option<Buffer>> = const { RefCell::new(None) };
}

/// Everything logged on this thread, at `DEBUG` and above, while it is alive.
pub struct CapturedLog {
    written: Buffer,
}

/// Writes into the current thread's capture buffer, or nowhere.
struct ThreadWriter;

impl std::io::Write for ThreadWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        CAPTURE.with(|capture| {
            if let Some(written) = capture.borrow().as_ref() {
                written.lock().unwrap().extend_from_slice(buf);
            }
        });
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl CapturedLog {
    /// Captures everything logged on this thread until dropped.
    pub fn start() -> Self {
        static GLOBAL: Once = Once::new();
        GLOBAL.call_once(|| {
            let subscriber = tracing_subscriber::fmt()
                .with_max_level(tracing::Level::DEBUG)
                .with_ansi(false)
                .without_time()
                .with_writer(|| ThreadWriter)
                .finish();
            tracing::subscriber::set_global_default(subscriber)
                .expect("no other global subscriber in this test binary");
        });
        let written = Buffer::default();
        CAPTURE.with(|capture| *capture.borrow_mut() = Some(written.clone()));
        Self { written }
    }

    /// The log so far, one string per line.
    pub fn lines(&self) -> Vec<String> {
        let written = self.written.lock().unwrap();
        String::from_utf8_lossy(&written)
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for CapturedLog {
    fn drop(&mut self) {
        CAPTURE.with(|capture| capture.borrow_mut().take());
    }
}
