//! The command line: durations, the byte limit, the modes `--help` names,
//! and the statuses of a command that cannot run, in the stdio mode and the
//! bridge.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::support::{Server, Session, result_text, run_wrapper, send, tool_call};

#[tokio::test]
async fn durations_take_fractions_hours_and_compounds() {
    for duration in ["500ms", "1.5s", "2m", "1h", "1m30s"] {
        let per_tool = format!("search={duration}");
        let args = [
            "--tool-timeout",
            duration,
            "--tool-timeout-for",
            &per_tool,
            "--",
            "true",
        ];
        let output = run_wrapper(&args).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{duration}: {stderr}");
    }
}

#[tokio::test]
async fn a_fractional_timeout_reaches_the_layer() {
    let server = Server::scripted(json!({}));
    let mut session = Session::wrapped(&["--tool-timeout-for", "hang=0.3s"], &server);
    let lines = session.exchange(&tool_call(1, "hang", json!({}))).await;
    let text = result_text(&lines[0]);
    assert!(text.contains("within 0.3 s"), "{text}");
}

#[tokio::test]
async fn a_zero_or_wrong_duration_is_refused() {
    for (duration, says) in [
        ("0s", "longer than zero"),
        ("30", "is not a duration"),
        ("1.5", "is not a duration"),
    ] {
        let output = run_wrapper(&["--tool-timeout", duration, "--", "true"]).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{duration}: {stderr}");
        assert!(stderr.contains(says), "{duration}: {stderr}");
    }
}

#[tokio::test]
async fn max_error_bytes_takes_one_or_more() {
    let output = run_wrapper(&["--max-error-bytes", "0", "--", "true"]).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("at least 1"), "{stderr}");
    let output = run_wrapper(&["--max-error-bytes", "1", "--", "true"]).await;
    assert_eq!(output.status.code(), Some(0));
}

#[tokio::test]
async fn help_says_what_max_error_bytes_counts() {
    let output = run_wrapper(&["--help"]).await;
    let help = String::from_utf8(output.stdout).expect("UTF-8");
    // clap wraps the help at the terminal's width: compare the words.
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for says in [
        "as the element's body shows it",
        "not counting the ` … [truncated N bytes]` suffix",
        "nor the `<error tool=\"NAME\">` element around it",
    ] {
        assert!(help.contains(says), "{says:?} is not in:\n{help}");
    }
}

#[tokio::test]
async fn a_command_that_exists_but_cannot_run_exits_126() {
    let directory = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let not_executable = directory.join("cli-not-executable-server");
    std::fs::write(&not_executable, "#!/bin/sh\nexit 0\n").expect("a file is written");
    std::fs::set_permissions(&not_executable, std::fs::Permissions::from_mode(0o644))
        .expect("its mode is set");
    for program in [&not_executable, directory] {
        let program = program.to_str().expect("a UTF-8 path");
        let output = run_wrapper(&["--", program]).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(126), "{program}: {stderr}");
        assert!(
            stderr.contains(&format!("cannot start `{program}`")),
            "{stderr}"
        );
    }
}

#[tokio::test]
async fn the_bridge_finds_a_command_that_cannot_start_at_its_start_as_the_stdio_mode_does() {
    let directory = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let not_executable = directory.join("bridge-not-executable-server");
    std::fs::write(&not_executable, "#!/bin/sh\nexit 0\n").expect("a file is written");
    std::fs::set_permissions(&not_executable, std::fs::Permissions::from_mode(0o644))
        .expect("its mode is set");
    for (program, code) in [
        ("/nonexistent/server", 127),
        ("no-such-server-on-the-path", 127),
        (not_executable.to_str().expect("a UTF-8 path"), 126),
        (directory.to_str().expect("a UTF-8 path"), 126),
    ] {
        let stdio = run_wrapper(&["--", program]).await;
        let bridge = run_wrapper(&["--listen", "127.0.0.1:0", "--", program]).await;
        let stderr = String::from_utf8_lossy(&bridge.stderr);
        assert_eq!(bridge.status.code(), Some(code), "{program}: {stderr}");
        assert_eq!(stdio.status.code(), Some(code), "{program}");
        assert_eq!(stderr, String::from_utf8_lossy(&stdio.stderr), "{program}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(&format!("cannot start `{program}`")),
            "{stderr}"
        );
    }
}

#[tokio::test]
async fn help_names_the_three_modes_with_a_usage_line_for_each() {
    let output = run_wrapper(&["--help"]).await;
    let help = String::from_utf8(output.stdout).expect("UTF-8");
    let usage: Vec<&str> = help
        .lines()
        .skip_while(|line| !line.starts_with("Usage:"))
        .take(3)
        .collect();
    let words = |line: &str| line.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        usage.iter().map(|line| words(line)).collect::<Vec<_>>(),
        [
            "Usage: mcp-tool-errors [OPTIONS] COMMAND [ARGS]... (stdio)",
            "mcp-tool-errors [OPTIONS] --upstream URL --listen ADDR (HTTP reverse proxy)",
            "mcp-tool-errors [OPTIONS] --listen ADDR [--] COMMAND [ARGS]... (bridge)",
        ],
        "{help}"
    );
    let summary = words(help.split("Usage:").next().expect("a summary"));
    for mode in [
        "Three modes: stdio",
        "HTTP reverse proxy (--upstream URL --listen ADDR",
        "bridge (--listen ADDR COMMAND",
    ] {
        assert!(summary.contains(mode), "{mode:?} is not in: {summary}");
    }
}

/// A child that writes its arguments to stderr, each in `<>`, and exits.
const PRINT_ARGUMENTS: [&str; 4] = ["sh", "-c", r#"printf '<%s>' "$@" >&2"#, "sh"];

#[tokio::test]
async fn the_command_starts_at_the_first_argument_that_is_not_an_option_and_keeps_its_own() {
    let child_options = ["--tool-timeout", "5", "--", "-x"];
    for separator in [&[][..], &["--"][..]] {
        let mut args = vec!["--tool-timeout", "1s"];
        args.extend(separator);
        args.extend(PRINT_ARGUMENTS);
        args.extend(child_options);
        let output = run_wrapper(&args).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "<--tool-timeout><5><--><-x>", "{args:?}");
    }
    let mut args = vec![];
    args.extend(PRINT_ARGUMENTS);
    args.push("--redact-secrets");
    let output = run_wrapper(&args).await;
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "<--redact-secrets>"
    );
}

#[tokio::test]
async fn a_tool_error_is_rewrapped_without_dashes_before_the_command() {
    let error = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"no such file"}],"isError":true}}"#;
    let server = Server::scripted(json!({"on": {"tools/call read": [send(error)]}}));
    let mut session = Session::wrapped_without_dashes(&["--redact-secrets"], &server);
    let lines = session.exchange(&tool_call(1, "read", json!({}))).await;
    assert_eq!(
        result_text(&lines[0]),
        mcp_tool_errors::render_error("read", "no such file")
    );
}

#[tokio::test]
async fn an_unknown_option_before_the_command_is_still_refused() {
    for args in [
        &["--no-such-option", "true"][..],
        &["--no-such-option", "--", "true"][..],
    ] {
        let output = run_wrapper(args).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("unexpected argument '--no-such-option'"),
            "{stderr}"
        );
    }
}
