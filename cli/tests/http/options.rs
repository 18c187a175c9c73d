//! The command line of the HTTP mode: what goes with `--upstream`, and what not.

use std::process::Stdio;

use tokio::process::Command;

use crate::support::bounded;

/// Runs the command with `args`; returns its exit code and stderr.
async fn run(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-tool-errors"))
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = bounded("the command exits", output).await.expect("it runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn upstream_needs_listen_and_excludes_a_command() {
    // `--listen ADDR -- server` alone is the bridge.
    let url = "http://127.0.0.1:9/mcp";
    for args in [
        &["--upstream", url][..],
        &["--upstream", url, "--listen", "127.0.0.1:0", "--", "server"],
        &["--drain-timeout", "5s", "--", "server"],
        &[
            "--upstream",
            url,
            "--listen",
            "127.0.0.1:0",
            "--drain-timeout",
            "0s",
        ],
    ] {
        let (code, stderr) = run(args).await;
        assert_eq!(code, Some(2), "{args:?} was accepted: {stderr}");
        assert!(stderr.contains("error:"), "{stderr}");
    }
}

#[tokio::test]
async fn an_upstream_that_is_no_http_url_is_refused_with_the_reason() {
    for (url, says) in [
        ("ftp://example/mcp", "http:// or https://"),
        ("/mcp", "http:// or https://"),
        ("http://example/mcp?session=1", "without a query"),
    ] {
        let (code, stderr) = run(&["--upstream", url, "--listen", "127.0.0.1:0"]).await;
        assert_eq!(code, Some(2), "{url}: {stderr}");
        assert!(stderr.contains(says), "{url}: {stderr}");
    }
}

#[tokio::test]
async fn an_address_in_use_is_an_error_at_start() {
    let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let (code, stderr) = run(&["--upstream", "http://127.0.0.1:9/mcp", "--listen", &address]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot listen on {address}")),
        "{stderr}"
    );
}

#[tokio::test]
async fn an_https_upstream_needs_root_certificates_and_an_http_one_none() {
    // rustls-native-certs reads only these when they are set.
    let no_roots = [
        ("SSL_CERT_FILE", "/dev/null"),
        ("SSL_CERT_DIR", "/nonexistent"),
    ];
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-tool-errors"))
        .args([
            "--upstream",
            "https://127.0.0.1:9/mcp",
            "--listen",
            "127.0.0.1:0",
        ])
        .envs(no_roots)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = bounded("the command exits", output).await.expect("it runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot load the platform's root certificates"),
        "{stderr}"
    );

    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-tool-errors"));
    command
        .args([
            "--upstream",
            "http://127.0.0.1:9/mcp",
            "--listen",
            "127.0.0.1:0",
        ])
        .envs(no_roots);
    // Returns once the proxy listens.
    let _listening =
        crate::support::ListeningProcess::spawn(command, "mcp-tool-errors: listening on ").await;
}
