//! [`install_panic_hook`]: keeps the payload of a panic the layer catches off
//! stderr.
//!
//! Rust prints every panic through the process's panic hook *before* unwinding
//! reaches the layer's `catch_unwind`, so the layer cannot stop the default hook
//! from writing the payload (which may hold a token) to stderr. The hook set here
//! knows, through a per-thread depth counter raised around each of the layer's
//! `catch_unwind` calls, whether a panic happens inside the layer: if so it stays
//! silent, keeps the panic's location (the one thing of a panic the hook alone
//! sees) for the layer's log, and the layer writes one line without the payload
//! when it answers the panic (that is where the tool and the request id are
//! known): a `tracing` event when a subscriber is set, a plain stderr line
//! otherwise. Any other panic goes to the hook that was installed before.
//!
//! A library cannot do this by default: the panic hook is one per process and
//! belongs to the application, which may have set its own (crash reporting,
//! structured logging, a test harness capturing output), and replacing it behind
//! the application's back, or in an order that depends on which library set it
//! last, would lose those. So it is one explicit call at startup.

use std::any::Any;
use std::cell::Cell;
use std::io::Write;
use std::panic::{AssertUnwindSafe, Location, catch_unwind};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

/// Installs a process-wide panic hook that keeps the message of every panic
/// caught by a [`ToolErrorLayer`](crate::ToolErrorLayer) off stderr.
///
/// For such a panic, one line is written when the layer answers it, with the
/// tool and the request id but not the payload: a `tracing` event (level
/// `WARN`, target `mcp_tool_errors`) when a `tracing` subscriber is set, so
/// that a structured log stays structured, and a plain line on stderr
/// otherwise. The payload of a handler's panic stays in the layer's `tracing`
/// error event (redacted when `redact_secrets` is on, and scrubbed by
/// [`redact_with`](crate::ToolErrorLayer::redact_with)); that of a panic of
/// the renderer or the scrubber is in no log, and the hook is what gives the
/// line and that event the panic's location (`file:line:column`). Every other
/// panic, on any thread, goes to the hook that was installed before this call,
/// unchanged. Call it once at startup, after any hook of your own; later calls do
/// nothing.
///
/// A panic that the inner service catches itself while the layer polls it is also
/// kept off stderr; a line says that one was withheld.
///
/// Why the layer does not do this by itself: Rust prints a panic through the
/// process's one panic hook before unwinding reaches any `catch_unwind`, and that
/// hook belongs to the application (crash reporting, structured logs, a test
/// harness); a library that replaced it unasked would silently take those away.
///
/// ```
/// mcp_tool_errors::install_panic_hook();
/// ```
pub fn install_panic_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !withhold_if_inside_layer(info.location()) {
                previous(info);
            }
        }));
        INSTALLED.store(true, Ordering::Release);
    });
}

/// Whether [`install_panic_hook`] ran: only then does the layer mark its
/// `catch_unwind` calls and write its own line.
static INSTALLED: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Copy)]
struct Inside {
    /// How many of the layer's `catch_unwind` calls this thread is in (layers
    /// can be stacked).
    depth: u32,
    /// Whether the hook kept a panic off stderr since the innermost one began.
    withheld: bool,
}

thread_local! {
    static INSIDE: Cell<Inside> = const { Cell::new(Inside { depth: 0, withheld: false }) };
    /// Where the last panic the hook withheld on this thread was raised, until
    /// the layer's `catch_unwind` that caught it takes it.
    static WITHHELD_AT: Cell<Option<String>> = const { Cell::new(None) };
}

/// A panic that the hook kept off stderr.
#[derive(Debug)]
pub(crate) struct Withheld {
    /// Where it was raised (`file:line:column`), as the hook was told.
    pub(crate) location: Option<String>,
}

/// Called by the hook: marks the panic as withheld when it happens inside the
/// layer, keeps its `location`, and says whether it did.
fn withhold_if_inside_layer(location: Option<&Location<'_>>) -> bool {
    let inside = INSIDE
        .try_with(|inside| {
            let mut state = inside.get();
            if state.depth == 0 {
                return false;
            }
            state.withheld = true;
            inside.set(state);
            true
        })
        .unwrap_or(false);
    if inside {
        let location = location.map(Location::to_string);
        // A thread being torn down keeps no location; the panic is still withheld.
        let _ = WITHHELD_AT.try_with(|at| at.set(location));
    }
    inside
}

/// Runs `run` under `catch_unwind`, with this thread marked as inside the layer.
/// Returns the outcome and, when the hook withheld a panic meanwhile, what it
/// kept of it. Costs two thread-local reads and writes once the hook is
/// installed, one relaxed load before; never allocates unless a panic was
/// withheld.
pub(crate) fn catch_inside_layer<T>(
    run: impl FnOnce() -> T,
) -> (Result<T, Box<dyn Any + Send>>, Option<Withheld>) {
    // Only the hook reads the mark: without it, nothing can be withheld. A call
    // that began before the hook was installed is not marked, and its panic goes
    // to the previous hook, as it would have before the installation.
    if !INSTALLED.load(Ordering::Relaxed) {
        return (catch_unwind(AssertUnwindSafe(run)), None);
    }
    let outer = INSIDE.with(|inside| {
        let state = inside.get();
        inside.set(Inside {
            depth: state.depth + 1,
            withheld: false,
        });
        state
    });
    let outcome = catch_unwind(AssertUnwindSafe(run));
    let withheld = INSIDE.with(|inside| {
        let withheld = inside.get().withheld;
        inside.set(outer);
        withheld
    });
    if !withheld {
        return (outcome, None);
    }
    let location = WITHHELD_AT.try_with(Cell::take).ok().flatten();
    if outcome.is_ok() {
        report(format_args!(
            "a panic inside the handler was caught by the handler itself; its message is withheld"
        ));
    }
    (outcome, Some(Withheld { location }))
}

/// Reports a withheld panic, if the hook is installed: as a `tracing` event
/// (level `WARN`, target `mcp_tool_errors`) when a subscriber is set, so that
/// it follows the application's log format; as one plain line on stderr
/// otherwise. Never the payload.
pub(crate) fn report(what: std::fmt::Arguments<'_>) {
    if !INSTALLED.load(Ordering::Acquire) {
        return;
    }
    if has_subscriber() {
        tracing::warn!(target: "mcp_tool_errors", "{what}");
    } else {
        // Nothing to do if stderr is gone; a panic here would be worse.
        let _ = writeln!(std::io::stderr().lock(), "mcp-tool-errors: {what}");
    }
}

/// Whether a `tracing` subscriber receives this thread's events: the one in
/// effect here (scoped or global) is not the no-op one that stands in when
/// none was set.
fn has_subscriber() -> bool {
    tracing::dispatcher::get_default(|dispatch| !dispatch.is::<tracing::subscriber::NoSubscriber>())
}
