//! The golden corpus through the JSON path: every case, byte for byte, for an
//! inner service answering `Option<Value>` and one answering a bare `Value`.

mod support;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;
use support::golden::{
    Case, Inner, assert_no_stray_files, check_output, load_cases, panicking, serialize_output,
};
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
        }
    }
}

async fn run_option(case: &Case) -> Value {
    let service = case.layer().layer(Scripted {
        inner: case.inner.clone(),
    });
    let response = service.oneshot(case.request.clone()).await.unwrap();
    response.unwrap_or(Value::Null)
}

async fn run_bare(case: &Case) -> Value {
    let inner = Scripted {
        inner: case.inner.clone(),
    }
    .map_response(|r| r.unwrap_or(Value::Null));
    let service = case.layer().layer(inner);
    service.oneshot(case.request.clone()).await.unwrap()
}

#[tokio::test]
async fn every_golden_case_through_the_json_path() {
    support::quiet_panics::silence_expected_panics();
    let cases = load_cases();
    assert!(cases.len() >= 25, "the corpus lost cases: {}", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let option = serialize_output(&run_option(case).await);
        let bare = serialize_output(&run_bare(case).await);
        assert_eq!(
            option, bare,
            "{}: Option<Value> and Value services disagree",
            case.name
        );
        if case.untouched {
            let Inner::Respond(inner) = &case.inner else {
                panic!("{}: only a response can pass untouched", case.name)
            };
            assert_eq!(
                serde_json::to_string(inner).unwrap(),
                serde_json::to_string(&run_option(case).await).unwrap(),
                "{}: {}",
                case.name,
                case.rule
            );
        }
        if let Err(diff) = check_output(&case.name, &option) {
            failures.push(diff);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_no_stray_files(&cases);
}
