//! The golden corpus through the JSON path: every case, byte for byte, for an
//! inner service answering `Option<Value>` and one answering a bare `Value`. The
//! exchanges of a sequence go through one layered service, in order.

use crate::support;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;
use support::golden::{
    Case, Inner, assert_no_stray_files, check_output, hanging, load_cases, panicking,
    serialize_output,
};
use tower::util::MapResponse;
use tower::{Layer, Service, ServiceExt};

/// The inner service of a case: answers, or panics in `call` or in its future.
#[derive(Clone)]
struct Scripted {
    inner: Inner,
}

impl Service<Value> for Scripted {
    type Response = Option<Value>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Option<Value>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: Value) -> Self::Future {
        match self.inner.clone() {
            Inner::Respond(Value::Null) => Box::pin(async { Ok(None) }),
            Inner::Respond(response) => Box::pin(async move { Ok(Some(response)) }),
            Inner::Panic { at, payload } => panicking(at, payload),
            Inner::Hang => hanging(),
        }
    }
}

/// What the client receives for each exchange, through one layered service
/// whose inner service is told before each request how to behave.
async fn run_option(case: &Case) -> Vec<Value> {
    let mut service = case.layer().layer(Scripted {
        inner: case.exchanges[0].inner.clone(),
    });
    let mut received = Vec::new();
    for exchange in &case.exchanges {
        service.get_mut().inner = exchange.inner.clone();
        let response = service.ready().await.unwrap();
        let response = response.call(exchange.request.clone()).await.unwrap();
        received.push(response.unwrap_or(Value::Null));
    }
    received
}

/// The same, for an inner service answering a bare `Value`.
async fn run_bare(case: &Case) -> Vec<Value> {
    let bare = |inner: Inner| -> MapResponse<Scripted, fn(Option<Value>) -> Value> {
        let or_null: fn(Option<Value>) -> Value = |r| r.unwrap_or(Value::Null);
        Scripted { inner }.map_response(or_null)
    };
    let mut service = case.layer().layer(bare(case.exchanges[0].inner.clone()));
    let mut received = Vec::new();
    for exchange in &case.exchanges {
        *service.get_mut() = bare(exchange.inner.clone());
        let response = service.ready().await.unwrap();
        received.push(response.call(exchange.request.clone()).await.unwrap());
    }
    received
}

/// The output pinned for `received`: the one response, or the array of them
/// for a sequence.
fn output(case: &Case, mut received: Vec<Value>) -> String {
    if case.sequence {
        serialize_output(&Value::Array(received))
    } else {
        serialize_output(&received.pop().expect("one exchange"))
    }
}

/// Under the paused clock, so that a timeout case takes no real time.
#[tokio::test(start_paused = true)]
async fn every_golden_case_through_the_json_path() {
    support::quiet_panics::silence_expected_panics();
    let cases = load_cases();
    assert!(cases.len() >= 25, "the corpus lost cases: {}", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let option = output(case, run_option(case).await);
        let bare = output(case, run_bare(case).await);
        assert_eq!(
            option, bare,
            "{}: Option<Value> and Value services disagree",
            case.name
        );
        if case.untouched {
            let received = run_option(case).await;
            for (exchange, received) in case.exchanges.iter().zip(&received) {
                let Inner::Respond(inner) = &exchange.inner else {
                    panic!("{}: only a response can pass untouched", case.name)
                };
                assert_eq!(
                    serde_json::to_string(inner).unwrap(),
                    serde_json::to_string(received).unwrap(),
                    "{}: {}",
                    case.name,
                    case.rule
                );
            }
        }
        if let Err(diff) = check_output(&case.name, &option) {
            failures.push(diff);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_no_stray_files();
}
