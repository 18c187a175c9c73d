//! The child's environment in the stdio mode: the command's whole
//! environment, or with `--env-clear` only what `--env NAME` names.

use std::process::Stdio;

use crate::support::{PATIENCE, wrapper};

/// The environment a child of the wrapper run with `options` sees, the
/// wrapper's own holding `KEPT` and `MCP_TEST_SECRET`: the child writes it
/// on stderr (`env -0`) and exits; `PWD`, which the shell adds, left out.
async fn childs_environment(options: &[&str]) -> Vec<(String, String)> {
    let output = tokio::process::Command::new(wrapper())
        .args(options)
        .args(["--", "/bin/sh", "-c", "exec /usr/bin/env -0 >&2"])
        .env("KEPT", "kept")
        .env("MCP_TEST_SECRET", "s3cret")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .output();
    let output = tokio::time::timeout(PATIENCE, output)
        .await
        .expect("the wrapper ends")
        .expect("the wrapper runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stderr)
        .expect("UTF-8")
        .split('\0')
        .filter_map(|entry| entry.split_once('='))
        .filter(|(name, _)| *name != "PWD")
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

fn value<'a>(environment: &'a [(String, String)], name: &str) -> Option<&'a str> {
    environment
        .iter()
        .find(|(named, _)| named == name)
        .map(|(_, value)| value.as_str())
}

#[tokio::test]
async fn the_child_gets_the_whole_environment_unless_env_clear_and_then_what_env_names() {
    let whole = childs_environment(&[]).await;
    assert_eq!(value(&whole, "MCP_TEST_SECRET"), Some("s3cret"));
    assert_eq!(value(&whole, "KEPT"), Some("kept"));
    assert!(value(&whole, "PATH").is_some());

    let named = childs_environment(&["--env-clear", "--env", "KEPT", "--env", "UNSET_HERE"]).await;
    assert_eq!(named, [("KEPT".to_owned(), "kept".to_owned())]);

    let none = childs_environment(&["--env-clear"]).await;
    assert_eq!(none, []);
}
