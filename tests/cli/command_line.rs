//! The command line: durations, the byte limit, and the statuses of a command
//! that cannot run.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::support::{Server, Session, result_text, run_wrapper, tool_call};

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
