//! The command's log on stderr: `mcp-tool-errors: MESSAGE` lines (`text`), or
//! one JSON object a line (`json`), for the command's events and the
//! library's alike, filtered by `RUST_LOG` (default: `info`).

use std::fmt;

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{EnvFilter, FilterExt, LevelFilter, filter_fn};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use super::TARGET;
use crate::observability_options::LogFormat;

/// The layer that writes the log in `format`.
pub(super) fn layer<S>(format: LogFormat) -> Box<dyn Layer<S> + Send + Sync>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    // Events only: the fmt layer would format the fields of every span it
    // saw, a cost per request for lines it never writes.
    let filter = filter_fn(|metadata| metadata.is_event()).and(
        EnvFilter::builder()
            .with_default_directive(LevelFilter::INFO.into())
            .from_env_lossy(),
    );
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    match format {
        LogFormat::Text => layer.event_format(Text).with_filter(filter).boxed(),
        LogFormat::Json => layer
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .with_filter(filter)
            .boxed(),
    }
}

/// `mcp-tool-errors: MESSAGE` for the command's own events, whose message
/// says what their fields hold; `mcp-tool-errors: LEVEL TARGET: MESSAGE
/// FIELD=VALUE…` for the library's.
#[derive(Debug)]
struct Text;

impl<S, N> FormatEvent<S, N> for Text
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        context: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let metadata = event.metadata();
        writer.write_str("mcp-tool-errors: ")?;
        if metadata.target() == TARGET {
            let mut message = Message {
                writer: &mut writer,
                result: Ok(()),
            };
            event.record(&mut message);
            message.result?;
        } else {
            write!(writer, "{} {}: ", metadata.level(), metadata.target())?;
            context.format_fields(writer.by_ref(), event)?;
        }
        writeln!(writer)
    }
}

/// Writes an event's message alone.
struct Message<'a, 'w> {
    writer: &'a mut Writer<'w>,
    result: fmt::Result,
}

impl Visit for Message<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.result = self.writer.write_str(value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.result = write!(self.writer, "{value:?}");
        }
    }
}

/// An error and its sources, for the log: hyper's own `Display` says only
/// "client error (Connect)".
pub(crate) fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
