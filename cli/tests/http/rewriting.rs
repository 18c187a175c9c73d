//! Answers to `tools/call` rewritten as on stdio, in a JSON body and in an event
//! stream relayed event by event; everything else byte for byte.

use hyper::StatusCode;
use mcp_tool_errors::render_error;
use serde_json::json;
use tokio::sync::mpsc;

use crate::support::{
    Events, Proxy, Reply, Upstream, body, error_result, event_data, json, tool_call,
};

#[tokio::test]
async fn an_error_result_in_a_json_body_is_rewrapped() {
    let upstream = Upstream::start(|_| Reply::json(&error_result(3, "no such change: 42"))).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let response = proxy.post(&tool_call(3, "search_changes"), &[]).await;

    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(
        json(response).await,
        json!({
            "jsonrpc": "2.0", "id": 3,
            "result": {
                "content": [{"type": "text", "text": render_error("search_changes", "no such change: 42")}],
                "isError": true,
            },
        })
    );
}

#[tokio::test]
async fn a_json_media_type_is_read_whatever_its_case_and_parameters() {
    let upstream = Upstream::start(|_| {
        Reply::Whole(
            StatusCode::OK,
            vec![("content-type", "Application/JSON; charset=utf-8".to_owned())],
            error_result(1, "boom").into_bytes(),
        )
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let answer = json(proxy.post(&tool_call(1, "t"), &[]).await).await;

    assert_eq!(
        answer["result"]["content"][0]["text"],
        render_error("t", "boom")
    );
}

#[tokio::test]
async fn an_https_upstream_is_reached_with_the_platforms_roots() {
    let upstream = Upstream::start_tls(|_| Reply::json(&error_result(2, "denied"))).await;
    // The platform's roots, as rustls-native-certs reads them: here, the test CA.
    let ca = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/http/tls/ca.pem");
    let proxy = Proxy::start_with_env(
        &format!("https://{}/mcp", upstream.address),
        &[],
        &[("SSL_CERT_FILE", ca), ("SSL_CERT_DIR", "/nonexistent")],
    )
    .await;

    let answer = json(proxy.post(&tool_call(2, "deploy"), &[]).await).await;

    assert_eq!(
        answer["result"]["content"][0]["text"],
        render_error("deploy", "denied")
    );
    assert_eq!(
        upstream.received()[0].header("host"),
        Some(upstream.address.to_string().as_str())
    );
}

#[tokio::test]
async fn the_options_of_the_stdio_mode_apply() {
    let text = "token=ghp_0123456789abcdefghijklmnopqrstuvwxyz failed, and a long tail";
    let upstream = Upstream::start(move |_| Reply::json(&error_result(1, text))).await;
    let proxy = Proxy::start(
        &upstream.url(),
        &["--redact-secrets", "--max-error-bytes", "20"],
    )
    .await;

    let answer = json(proxy.post(&tool_call(1, "deploy"), &[]).await).await;

    let rendered = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        rendered.starts_with("<error tool=\"deploy\">\n"),
        "{rendered}"
    );
    assert!(!rendered.contains("ghp_"), "{rendered}");
    assert!(rendered.contains("[truncated"), "{rendered}");
}

#[tokio::test]
async fn answers_the_layer_leaves_alone_keep_the_upstreams_bytes() {
    // Spaces, key order and escapes that a serializer would not reproduce.
    let success = "{ \"result\" : {\"content\":[{\"type\":\"text\",\"text\":\"caf\\u00e9\"}],\"isError\":false}, \"id\":1,\"jsonrpc\":\"2.0\" }";
    let protocol_error =
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: nope"}}"#;
    let upstream = Upstream::start(move |request| match request.json()["id"].as_u64() {
        Some(1) => Reply::json(success),
        _ => Reply::json(protocol_error),
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let first = proxy.post(&tool_call(1, "search"), &[]).await;
    assert_eq!(body(first).await, success.as_bytes());
    let second = proxy.post(&tool_call(2, "nope"), &[]).await;
    assert_eq!(body(second).await, protocol_error.as_bytes());
}

#[tokio::test]
async fn an_error_already_rendered_is_not_wrapped_twice_and_keeps_its_bytes() {
    // Written with its keys in an order a serializer would not choose.
    let rendered = serde_json::to_string(&render_error("search", "no such change")).unwrap();
    let answer = format!(
        r#"{{"result":{{"isError":true,"content":[{{"text":{rendered},"type":"text"}}]}},"jsonrpc":"2.0","id":1}}"#
    );
    let upstream = Upstream::start(move |_| Reply::json(&answer.clone())).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let response = proxy.post(&tool_call(1, "search"), &[]).await;

    let expected = format!(
        r#"{{"result":{{"isError":true,"content":[{{"text":{rendered},"type":"text"}}]}},"jsonrpc":"2.0","id":1}}"#
    );
    assert_eq!(body(response).await, expected.as_bytes());
}

#[tokio::test]
async fn a_batch_in_a_json_body_has_each_answer_matched_to_its_request() {
    let upstream = Upstream::start(|_| {
        Reply::json(&format!(
            r#"[{{"jsonrpc":"2.0","id":"p","result":{{}}}},{}]"#,
            error_result(1, "quota exceeded")
        ))
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let batch = format!(
        r#"[{},{{"jsonrpc":"2.0","id":"p","method":"ping"}}]"#,
        tool_call(1, "search")
    );

    let answer = json(proxy.post(&batch, &[]).await).await;

    assert_eq!(
        answer,
        json!([
            {"jsonrpc": "2.0", "id": "p", "result": {}},
            {
                "jsonrpc": "2.0", "id": 1,
                "result": {
                    "content": [{"type": "text", "text": render_error("search", "quota exceeded")}],
                    "isError": true,
                },
            },
        ])
    );
}

/// A batch answered in an event stream with an event per answer, as the
/// TypeScript SDK's server writes it: every tool error of the batch is
/// rewrapped, not only the first answer's; a request whose answer never comes
/// before the stream ends gets the proxy's. With and without a tool timeout
/// (the layer's future then reads the first answer).
#[tokio::test]
async fn a_batch_answered_an_event_at_a_time_has_every_tool_error_rewrapped() {
    let upstream = Upstream::start(|_| {
        Reply::events(&[
            &format!(
                "event: message\ndata: {}\n\n",
                error_result(2, "second failed")
            ),
            &format!(
                "event: message\ndata: {}\n\n",
                error_result(1, "first failed")
            ),
        ])
    })
    .await;
    let batch = format!(
        r#"[{},{},{}]"#,
        tool_call(1, "alpha"),
        tool_call(2, "beta"),
        tool_call(3, "gamma")
    );
    for options in [&[][..], &["--tool-timeout", "30s"]] {
        let proxy = Proxy::start(&upstream.url(), options).await;
        let mut events = Events::new(proxy.post(&batch, &[]).await);
        let mut texts = Vec::new();
        while let Some(event) = events.next().await {
            let answer = event_data(&event);
            let answers = match answer {
                serde_json::Value::Array(batch) => batch,
                single => vec![single],
            };
            for answer in answers {
                texts.push((
                    answer["id"].clone(),
                    answer["result"]["content"][0]["text"].clone(),
                ));
            }
        }
        assert_eq!(
            texts,
            [
                (json!(2), json!(render_error("beta", "second failed"))),
                (json!(1), json!(render_error("alpha", "first failed"))),
                (
                    json!(3),
                    json!(render_error(
                        "gamma",
                        "The server closed the connection before answering."
                    ))
                ),
            ],
            "options {options:?}"
        );
    }
}

/// The answers of a batch's response: its JSON body, or the data of each of
/// its events.
async fn answers_in(response: hyper::Response<hyper::body::Incoming>) -> serde_json::Value {
    match response.headers()["content-type"].to_str().unwrap() {
        "application/json" => json(response).await,
        _ => {
            let mut events = Events::new(response);
            let mut answers = Vec::new();
            while let Some(event) = events.next().await {
                answers.push(event_data(&event));
            }
            serde_json::Value::Array(answers)
        }
    }
}

/// A batch that holds one id twice (`1`, and `1.0`: one id), which a server
/// answers an event at a time: the proxy could not tell which answer is
/// whose, so the batch is refused whole, as the stdio mode refuses it
/// (`-32600` to each request), and never reaches the server: no answer
/// reaches the client raw. With and without a tool timeout.
#[tokio::test]
async fn a_batch_with_an_id_twice_is_refused_and_no_answer_passes_raw() {
    let upstream = Upstream::start(|_| {
        Reply::events(&[
            &format!(
                "event: message\ndata: {}\n\n",
                error_result(1, "first failed")
            ),
            &format!(
                "event: message\ndata: {}\n\n",
                error_result(1, "second failed")
            ),
        ])
    })
    .await;
    let again = r#"{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"beta","arguments":{}}}"#;
    for second in [tool_call(1, "beta"), again.to_owned()] {
        let batch = format!("[{},{second}]", tool_call(1, "alpha"));
        for options in [&[][..], &["--tool-timeout", "30s"]] {
            let proxy = Proxy::start(&upstream.url(), options).await;
            let response = proxy.post(&batch, &[]).await;
            let what = format!("{second}, options {options:?}");
            let answers = answers_in(response).await;
            for answer in answers.as_array().unwrap() {
                let text = &answer["result"]["content"][0]["text"];
                assert!(
                    text.is_null() || text.as_str().unwrap().starts_with("<error tool="),
                    "an answer passed raw: {answer} ({what})"
                );
            }
            let codes: Vec<_> = answers
                .as_array()
                .unwrap()
                .iter()
                .map(|answer| answer["error"]["code"].clone())
                .collect();
            assert_eq!(codes, [json!(-32600), json!(-32600)], "{answers} ({what})");
            assert_eq!(
                answers[1]["error"]["message"],
                format!(
                    "Invalid request: id {} is already in use.",
                    answers[1]["id"]
                ),
                "{what}"
            );
        }
    }
    assert!(upstream.received().is_empty(), "the server got the batch");
}

/// A batch of two ids that JSON-RPC tells apart and a server reading numbers
/// as doubles (JavaScript's `JSON.parse`) takes for one: it answers both with
/// `9007199254740992`, and the proxy could not tell which answer is whose.
/// Refused as one id twice, never sent; no answer reaches the client raw.
#[tokio::test]
async fn a_batch_of_ids_that_are_one_double_is_refused_and_no_answer_passes_raw() {
    const AS_READ: u64 = 9_007_199_254_740_992;
    let upstream = Upstream::start(|_| {
        let first = error_result(AS_READ, "first failed");
        let second = error_result(AS_READ, "second failed");
        Reply::events(&[
            &format!("event: message\ndata: {first}\n\n"),
            &format!("event: message\ndata: {second}\n\n"),
        ])
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let batch = format!(
        "[{},{}]",
        tool_call(AS_READ, "alpha"),
        tool_call(AS_READ + 1, "beta")
    );
    let response = proxy.post(&batch, &[]).await;
    let answers = answers_in(response).await;
    for answer in answers.as_array().unwrap() {
        let text = &answer["result"]["content"][0]["text"];
        assert!(
            text.is_null() || text.as_str().unwrap().starts_with("<error tool="),
            "an answer passed raw: {answer}"
        );
    }
    for answer in answers.as_array().unwrap() {
        assert_eq!(answer["error"]["code"], -32600, "{answers}");
    }
    assert!(upstream.received().is_empty(), "the server got the batch");
}

/// A body the proxy cannot read as JSON which a server reads all the same
/// (the Python SDK takes `NaN`, `Infinity` and `1e400`; a server behind Express's
/// body parser inflates a gzip body): a server that answers any body with a
/// tool error stands for it. Such a body goes no further, answered `400`
/// with `-32700` as the bridge answers it, so no tool runs without the layer.
#[tokio::test]
async fn a_body_that_is_no_json_is_answered_a_parse_error_and_never_reaches_the_server() {
    let upstream = Upstream::start(|_| Reply::json(&error_result(1, "disk full"))).await;
    let nan = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fail","arguments":{"n":NaN}}}"#;
    // JSON by the grammar, but past a double's range: infinity to the SDK.
    let out_of_range = format!("[{}]", nan.replace("NaN", "1e400"));
    for options in [&[][..], &["--tool-timeout", "30s"]] {
        let proxy = Proxy::start(&upstream.url(), options).await;
        for unread in [nan, &out_of_range, "\u{feff}{}", "[", ""] {
            let response = proxy.post(unread, &[]).await;
            assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{unread:?}");
            let answer = json(response).await;
            assert_eq!(
                answer,
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
                "{unread:?}, options {options:?}"
            );
        }
    }
    assert!(upstream.received().is_empty(), "the server got a body");
}

#[tokio::test]
async fn an_event_stream_is_relayed_as_it_arrives_and_only_the_answer_event_changes() {
    let (chunks, script_chunks) = mpsc::unbounded_channel();
    let script_chunks = std::sync::Mutex::new(Some(script_chunks));
    let upstream = Upstream::start(move |_| {
        Reply::Events(script_chunks.lock().unwrap().take().expect("one request"))
    })
    .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let progress = "id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n";
    chunks.send(Ok(b": keep-alive\n\n".to_vec())).unwrap();
    chunks.send(Ok(progress.as_bytes().to_vec())).unwrap();

    let response = proxy.post(&tool_call(5, "build"), &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut events = Events::new(response);

    // Before the server has sent the answer: what it sent so far, as it is.
    assert_eq!(events.next().await.unwrap(), ": keep-alive\n\n");
    assert_eq!(events.next().await.unwrap(), progress);

    let answer = error_result(5, "exit status 2");
    // The answer event in two pieces, the second after the first went out.
    let first_half = format!("retry: 3000\nid: 8\ndata: {}", &answer[..10]);
    chunks.send(Ok(first_half.into_bytes())).unwrap();
    chunks
        .send(Ok(format!("{}\n\n", &answer[10..]).into_bytes()))
        .unwrap();
    drop(chunks);

    let event = events.next().await.unwrap();
    let expected = json!({
        "jsonrpc": "2.0", "id": 5,
        "result": {
            "content": [{"type": "text", "text": render_error("build", "exit status 2")}],
            "isError": true,
        },
    });
    assert_eq!(event, format!("retry: 3000\nid: 8\ndata: {expected}\n\n"));
    assert_eq!(event_data(&event), expected);
    assert_eq!(events.next().await, None);
}

#[tokio::test]
async fn an_answer_event_the_layer_leaves_alone_keeps_its_bytes() {
    let answer_event =
        "id: 1\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":1,\"result\":{\"tools\":[]}}\r\n\r\n";
    let upstream = Upstream::start(move |_| Reply::events(&[answer_event])).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let response = proxy
        .post(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, &[])
        .await;

    assert_eq!(body(response).await, answer_event.as_bytes());
}

/// An answer spelled as no serializer would write it: keys out of order,
/// spaces, a number written `1.50`, an escaped slash.
const ODDLY_SPELLED_ERROR: &str = r#"{ "result" : {"isError":true, "content":[{"text":"exit status 2","type":"text"}], "_meta":{"n":1.50, "url":"a\/b"}}, "id":5 , "jsonrpc":"2.0" }"#;

/// `ODDLY_SPELLED_ERROR` as the layer must leave it: the text rewrapped, every
/// other byte as the upstream wrote it.
fn oddly_spelled_rewrapped() -> String {
    let text = serde_json::to_string(&render_error("build", "exit status 2")).unwrap();
    ODDLY_SPELLED_ERROR.replace(r#""exit status 2""#, &text)
}

#[tokio::test]
async fn a_rewritten_json_answer_keeps_every_byte_of_the_upstreams_but_the_text() {
    let upstream = Upstream::start(|_| Reply::json(ODDLY_SPELLED_ERROR)).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let response = proxy.post(&tool_call(5, "build"), &[]).await;

    assert_eq!(
        String::from_utf8(body(response).await.to_vec()).unwrap(),
        oddly_spelled_rewrapped()
    );
}

#[tokio::test]
async fn a_rewritten_answer_event_keeps_every_byte_of_the_upstreams_but_the_text() {
    let upstream =
        Upstream::start(|_| Reply::events(&[&format!("id: 1\ndata: {ODDLY_SPELLED_ERROR}\n\n")]))
            .await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let response = proxy.post(&tool_call(5, "build"), &[]).await;
    let mut events = Events::new(response);

    assert_eq!(
        events.next().await.unwrap(),
        format!("id: 1\ndata: {}\n\n", oddly_spelled_rewrapped())
    );
}

/// A task handle answering a call sent as `9.0` with the id `9`: the task's
/// id the client gets is the proxy's (it names the tool, for any replica),
/// on the direct path and through an exchange, in JSON and as an event.
#[tokio::test]
async fn a_task_handle_answered_with_another_spelling_of_the_calls_id_names_the_proxys_task() {
    let handle = r#"{"jsonrpc":"2.0","id":9,"result":{"task":{"taskId":"srv-7","status":"working","ttl":60000}}}"#;
    let call = r#"{"jsonrpc":"2.0","id":9.0,"method":"tools/call","params":{"name":"build","arguments":{},"task":{"ttl":60000}}}"#;
    for stream in [false, true] {
        let upstream = Upstream::start(move |_| match stream {
            false => Reply::json(handle),
            true => Reply::events(&[&format!("event: message\ndata: {handle}\n\n")]),
        })
        .await;
        for options in [&[][..], &["--tool-timeout", "30s"]] {
            let proxy = Proxy::start(&upstream.url(), options).await;
            let response = proxy.post(call, &[]).await;
            let answer = match stream {
                false => json(response).await,
                true => event_data(&Events::new(response).next().await.expect("an event")),
            };
            let task_id = answer["result"]["task"]["taskId"]
                .as_str()
                .unwrap_or_default();
            assert!(
                task_id.starts_with("mte1.") && task_id != "srv-7",
                "stream {stream}, options {options:?}: {answer}"
            );
        }
    }
}

/// A call sent with the id `9.0` and answered with `9`, as the TypeScript SDK's
/// servers write a number back (server-everything: `9.0` to `9`): the same call, so its error is rewrapped
/// and redacted, in a JSON body and in an event stream, on the direct path
/// and through an exchange (a timeout applies).
#[tokio::test]
async fn an_answer_with_another_spelling_of_the_calls_id_is_its_answer_on_every_path() {
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let answer = error_result(9, &format!("boom: token {secret}"));
    let as_event = format!("event: message\ndata: {answer}\n\n");
    let call = r#"{"jsonrpc":"2.0","id":9.0,"method":"tools/call","params":{"name":"fail","arguments":{}}}"#;
    for stream in [false, true] {
        let (answer, as_event) = (answer.clone(), as_event.clone());
        let upstream = Upstream::start(move |_| match stream {
            false => Reply::json(&answer),
            true => Reply::events(&[&as_event]),
        })
        .await;
        for options in [
            &["--redact-secrets"][..],
            &["--redact-secrets", "--tool-timeout", "30s"],
        ] {
            let proxy = Proxy::start(&upstream.url(), options).await;
            let response = proxy.post(call, &[]).await;
            let answer = match stream {
                false => json(response).await,
                true => event_data(&Events::new(response).next().await.expect("an event")),
            };
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            let what = format!("stream {stream}, options {options:?}: {text}");
            assert!(text.starts_with("<error tool=\"fail\">\n"), "{what}");
            assert!(
                !text.contains(secret) && text.contains("[REDACTED]"),
                "{what}"
            );
        }
    }
}
