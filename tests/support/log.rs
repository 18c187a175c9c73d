//! The `tracing` output of the current thread, kept in memory for assertions.

use std::sync::{Arc, Mutex};

use tracing::Level;
use tracing::subscriber::DefaultGuard;

/// Everything logged on this thread while it is alive (events at `INFO` and above
/// unless started with [`CapturedLog::start_at`]).
pub struct CapturedLog {
    written: Arc<Mutex<Vec<u8>>>,
    _guard: DefaultGuard,
}

#[derive(Clone)]
struct Writer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl CapturedLog {
    /// Captures events at `INFO` and above on this thread until dropped.
    pub fn start() -> Self {
        Self::start_at(Level::INFO)
    }

    /// Captures events at `level` and above on this thread until dropped.
    pub fn start_at(level: Level) -> Self {
        let written = Arc::new(Mutex::new(Vec::new()));
        let writer = Writer(written.clone());
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(level)
            .with_ansi(false)
            .without_time()
            .with_writer(move || writer.clone())
            .finish();
        Self {
            written,
            _guard: tracing::subscriber::set_default(subscriber),
        }
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
