//! The child's exit status: how the wrapper says it to the client, and the
//! status the wrapper exits with.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use mcp_tool_errors::NoAnswer;
use serde_json::Value;

use crate::jsonrpc::message::Answer;
use crate::jsonrpc::own_answer;

/// `exit code N` or `signal NAME`, as the answers of a crashed server say it.
pub(crate) fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {}", signal_name(signal)),
        (None, None) => "an unknown status".to_owned(),
    }
}

/// The wrapper's own exit status: the child's code, or 128 + N for signal N, as
/// a shell reports a process killed by a signal.
pub(crate) fn exit_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    }
}

/// The wrapper's exit status when the command cannot be started, as a shell
/// says it: 127 for a command not found, 126 for one found that cannot run
/// (not executable, a directory, permission denied, not a program).
pub(crate) fn spawn_failure(error: &std::io::Error) -> i32 {
    match error.kind() {
        std::io::ErrorKind::NotFound => 127,
        _ => 126,
    }
}

/// The sentence every request still in flight gets when the child is gone.
pub(crate) fn exited_message(status: &str) -> String {
    format!("The server process exited ({status}) before answering.")
}

/// The answer to a request (or batch) that the child left unanswered: an
/// `isError` result for a `tools/call` (the layer renders it into the element),
/// a `-32603` error for anything else; `error.type` `server_exited` on the
/// layer's span.
pub(crate) fn exited_answer(requests: &[(Value, bool)], batch: bool, status: &str) -> Answer {
    let message = exited_message(status);
    Answer::made(own_answer::unanswered_all(
        requests,
        batch,
        &message,
        NoAnswer::ServerExited,
    ))
}

fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return signal.to_string(),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn exit_codes_and_signals_are_described_the_way_a_shell_reports_them() {
        let exited = ExitStatus::from_raw(3 << 8);
        assert_eq!(describe(exited), "exit code 3");
        assert_eq!(exit_code(exited), 3);
        let killed = ExitStatus::from_raw(libc::SIGKILL);
        assert_eq!(describe(killed), "signal SIGKILL");
        assert_eq!(exit_code(killed), 128 + 9);
    }

    #[test]
    fn tool_calls_get_an_error_result_and_other_requests_an_internal_error() {
        let requests = [(json!(1), true), (json!("p"), false)];
        let answer = exited_answer(&requests, true, "exit code 3");
        assert_eq!(
            answer.value[0]["result"]["content"][0]["text"],
            "The server process exited (exit code 3) before answering."
        );
        assert_eq!(answer.value[0]["result"]["isError"], true);
        assert_eq!(answer.value[1]["id"], "p");
        assert_eq!(answer.value[1]["error"]["code"], -32603);
    }
}
