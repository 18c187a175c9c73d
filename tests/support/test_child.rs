//! Running one test of the current test binary again, alone, in a new
//! process: for what only a fresh process shows (a panic hook, stderr).

use std::process::Command;

/// The stderr of the test `test_path` (`module::name`) of this test binary,
/// run alone in a new process with the environment variable `env` set to
/// `mode`; the run must succeed.
pub fn stderr_of(test_path: &str, env: &str, mode: &str) -> String {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test_path, "--nocapture", "--test-threads=1"])
        .env(env, mode)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stderr).unwrap()
}
