//! The OTLP exporters' HTTP client: hyper and rustls, as for the upstream,
//! driven by the SDK's own export thread that calls it, on a runtime without
//! threads of its own. A collector that fails is logged at most once a
//! minute, with the count of the failures in between.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

use crate::telemetry::describe;

/// How long a request to the collector may take when
/// `OTEL_EXPORTER_OTLP_TIMEOUT` does not say: the specification's default.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most of a collector's answer that is read (its body is a short
/// protobuf message).
const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// How often a collector's failure is logged at most.
const FAILURE_LOG_PERIOD: Duration = Duration::from_secs(60);

/// The client of one signal's exporter.
#[derive(Debug)]
pub(super) struct ExportClient {
    /// Runs the requests, in the thread that calls [`HttpClient::send_bytes`].
    runtime: tokio::runtime::Runtime,
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    timeout: Duration,
    failures: Mutex<Failures>,
}

impl ExportClient {
    pub(super) fn new() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let timeout = timeout_from_env();
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false);
        tcp.set_connect_timeout(Some(timeout));
        tcp.set_nodelay(true);
        let connector = match HttpsConnectorBuilder::new().with_native_roots() {
            Ok(builder) => builder.https_or_http().enable_http1().wrap_connector(tcp),
            // No certificates on the host: only an http:// collector.
            Err(_) => HttpsConnectorBuilder::new()
                .with_tls_config(
                    rustls::ClientConfig::builder()
                        .with_root_certificates(rustls::RootCertStore::empty())
                        .with_no_client_auth(),
                )
                .https_or_http()
                .enable_http1()
                .wrap_connector(tcp),
        };
        Ok(Self {
            runtime,
            client: Client::builder(TokioExecutor::new()).build(connector),
            timeout,
            failures: Mutex::default(),
        })
    }

    async fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let response = self
            .client
            .request(Request::from_parts(parts, Full::new(body)))
            .await?;
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, MAX_RESPONSE_BYTES).collect().await?;
        Ok(Response::from_parts(parts, body.to_bytes()))
    }

    fn log_failure(&self, uri: &str, failure: &str) {
        let mut failures = self
            .failures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(more) = failures.due(Instant::now()) {
            event!(
                warn,
                endpoint = uri,
                error = failure,
                "cannot export telemetry to {uri}: {failure}{}",
                match more {
                    0 => String::new(),
                    more => format!(" ({more} more failures since the last line)"),
                }
            );
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for ExportClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let uri = request.uri().to_string();
        let sent = self
            .runtime
            .block_on(async { tokio::time::timeout(self.timeout, self.send(request)).await });
        let sent = match sent {
            Ok(sent) => sent,
            Err(_) => Err(format!("no answer within {:?}", self.timeout).into()),
        };
        match &sent {
            Ok(response) if !response.status().is_success() => {
                self.log_failure(&uri, &format!("HTTP {}", response.status()));
            }
            Ok(_) => {}
            Err(error) => self.log_failure(&uri, &describe(error.as_ref())),
        }
        sent
    }
}

/// `OTEL_EXPORTER_OTLP_TIMEOUT`, in milliseconds, or the default.
fn timeout_from_env() -> Duration {
    std::env::var("OTEL_EXPORTER_OTLP_TIMEOUT")
        .ok()
        .and_then(|millis| millis.trim().parse::<u64>().ok())
        .filter(|millis| *millis > 0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis)
}

/// When a failure is logged: the first, then at most one a period.
#[derive(Debug, Default)]
struct Failures {
    last_logged: Option<Instant>,
    not_logged: u64,
}

impl Failures {
    /// `Some(failures not logged since the last line)` when this one is to
    /// be logged at `now`.
    fn due(&mut self, now: Instant) -> Option<u64> {
        if self
            .last_logged
            .is_some_and(|last| now.duration_since(last) < FAILURE_LOG_PERIOD)
        {
            self.not_logged += 1;
            return None;
        }
        self.last_logged = Some(now);
        Some(std::mem::take(&mut self.not_logged))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_logged_at_most_once_a_minute_with_the_count_between() {
        let mut failures = Failures::default();
        let start = Instant::now();
        assert_eq!(failures.due(start), Some(0));
        for second in 1..60 {
            assert_eq!(failures.due(start + Duration::from_secs(second)), None);
        }
        assert_eq!(failures.due(start + Duration::from_secs(60)), Some(59));
        assert_eq!(failures.due(start + Duration::from_secs(61)), None);
    }
}
