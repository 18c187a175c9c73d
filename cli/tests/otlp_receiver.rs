//! An OTLP/HTTP receiver in the test: a hyper server on 127.0.0.1 that
//! decodes what it is sent to `/v1/traces` and `/v1/metrics` with the official
//! protobuf definitions (`opentelemetry-proto`), and answers 200.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::metric;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use tokio::net::TcpListener;

/// What the receiver was sent.
#[derive(Debug, Default)]
struct Received {
    traces: Vec<ExportTraceServiceRequest>,
    metrics: Vec<ExportMetricsServiceRequest>,
    /// The `x-test` header of each request, as `OTEL_EXPORTER_OTLP_HEADERS`
    /// set it.
    headers: Vec<Option<String>>,
}

/// The receiver, serving until dropped.
pub(crate) struct Receiver {
    pub(crate) address: SocketAddr,
    received: Arc<Mutex<Received>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Receiver {
    pub(crate) async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let address = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Received::default()));
        let store = received.clone();
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let store = store.clone();
                let service = service_fn(move |request: Request<Incoming>| {
                    let store = store.clone();
                    async move {
                        let path = request.uri().path().to_owned();
                        let header = request
                            .headers()
                            .get("x-test")
                            .and_then(|value| value.to_str().ok())
                            .map(str::to_owned);
                        let body = request.into_body().collect().await.unwrap().to_bytes();
                        let mut store = store.lock().unwrap();
                        store.headers.push(header);
                        match path.as_str() {
                            "/v1/traces" => store
                                .traces
                                .push(ExportTraceServiceRequest::decode(body).expect("protobuf")),
                            "/v1/metrics" => store
                                .metrics
                                .push(ExportMetricsServiceRequest::decode(body).expect("protobuf")),
                            other => panic!("an OTLP export to {other}"),
                        }
                        Ok::<_, Infallible>(Response::new(Full::new(Bytes::new())))
                    }
                });
                tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
            }
        });
        Self {
            address,
            received,
            server,
        }
    }

    /// `OTEL_EXPORTER_OTLP_ENDPOINT` for this receiver.
    pub(crate) fn endpoint(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Every span received.
    pub(crate) fn spans(&self) -> Vec<Span> {
        let received = self.received.lock().unwrap();
        received
            .traces
            .iter()
            .flat_map(|request| &request.resource_spans)
            .flat_map(|resource| &resource.scope_spans)
            .flat_map(|scope| scope.spans.clone())
            .collect()
    }

    /// The service name of every resource received.
    pub(crate) fn service_names(&self) -> Vec<String> {
        let received = self.received.lock().unwrap();
        let traces = received
            .traces
            .iter()
            .flat_map(|request| &request.resource_spans)
            .filter_map(|resource| resource.resource.as_ref());
        let metrics = received
            .metrics
            .iter()
            .flat_map(|request| &request.resource_metrics)
            .filter_map(|resource| resource.resource.as_ref());
        traces
            .chain(metrics)
            .filter_map(|resource| string(&resource.attributes, "service.name"))
            .collect()
    }

    /// The `x-test` header of every request received.
    pub(crate) fn headers(&self) -> Vec<Option<String>> {
        self.received.lock().unwrap().headers.clone()
    }

    /// The count of the data points of the histogram `name` for each value of
    /// its attribute `key`: `(value, count)`.
    pub(crate) fn histogram_counts(&self, name: &str, key: &str) -> Vec<(Option<String>, u64)> {
        let received = self.received.lock().unwrap();
        received
            .metrics
            .iter()
            .flat_map(|request| &request.resource_metrics)
            .flat_map(|resource| &resource.scope_metrics)
            .flat_map(|scope| &scope.metrics)
            .filter(|metric| metric.name == name)
            .filter_map(|metric| match &metric.data {
                Some(metric::Data::Histogram(histogram)) => Some(histogram.data_points.clone()),
                _ => None,
            })
            .flatten()
            .map(|point| (string(&point.attributes, key), point.count))
            .collect()
    }

    /// Asserts that the metric names `tool`, which failed with a tool error
    /// in both of its two calls, by its name and not as `_OTHER`, and that no
    /// span was exported.
    pub(crate) fn assert_names_tool_that_failed_twice(&self, tool: &str) {
        let tools = self.histogram_counts("mcp.server.operation.duration", "gen_ai.tool.name");
        assert!(
            tools.contains(&(Some(tool.to_owned()), 2)),
            "the tool is named: {tools:?}"
        );
        assert!(
            !tools.contains(&(Some("_OTHER".to_owned()), 2)),
            "{tools:?}"
        );
        let errors = self.histogram_counts("mcp.server.operation.duration", "error.type");
        assert!(
            errors.contains(&(Some("tool_error".to_owned()), 2)),
            "{errors:?}"
        );
        assert!(self.spans().is_empty());
    }
}

/// The string value of attribute `key`.
pub(crate) fn string(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes
        .iter()
        .find(|attribute| attribute.key == key)
        .and_then(|attribute| attribute.value.as_ref())
        .and_then(|value: &AnyValue| match &value.value {
            Some(any_value::Value::StringValue(text)) => Some(text.clone()),
            Some(any_value::Value::IntValue(number)) => Some(number.to_string()),
            _ => None,
        })
}
