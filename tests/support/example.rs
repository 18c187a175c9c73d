//! An example binary, built for the test or bench that runs it as a child
//! process, and bounded waits on child processes.
//!
//! Shared with the command's package, `cli/` (its tests and `benches/cli_relay.rs`
//! include this file by `#[path]`), so it depends on the standard library and
//! `serde_json` only; there it builds the command's examples.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Hang guard for building an example when `cargo test` has not already.
const BUILD_WITHIN: Duration = Duration::from_secs(600);

/// The executable of example `name`, built with this binary's profile and
/// features, once per binary.
///
/// `cargo test` builds examples next to the tests, but `cargo test --test NAME`
/// does not, and a binary left from an earlier build may be stale: asking cargo
/// is a no-op when it is fresh, and always right. The same profile and features
/// as this build, so that cargo does not rebuild the library another way.
pub fn example_binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    built
        .entry(name.to_owned())
        .or_insert_with(|| build(name))
        .clone()
}

fn build(name: &str) -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let mut command = Command::new(cargo);
    command
        .args([
            "build",
            "--quiet",
            "--message-format=json",
            "--example",
            name,
        ])
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--features")
        .arg(features().join(","))
        .args(profile_args());
    let output = run_bounded(command, BUILD_WITHIN);
    output
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter(|message| message["target"]["name"] == name)
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo built no {name} executable:\n{output}"))
}

/// The crate features this test binary was built with: the library's; none in
/// the command's package, which has no features (hence the allowance).
#[allow(unexpected_cfgs)]
fn features() -> Vec<&'static str> {
    [
        ("opentelemetry", cfg!(feature = "opentelemetry")),
        ("rmcp", cfg!(feature = "rmcp")),
        ("tower-mcp", cfg!(feature = "tower-mcp")),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect()
}

/// The cargo profile this test binary was built with, read from its directory
/// (`<target>/<profile dir>/deps/<test>`).
fn profile_args() -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .and_then(|name| name.to_str())
        .unwrap_or("debug");
    match profile_dir {
        "debug" => vec![],
        "release" => vec!["--release".to_owned()],
        custom => vec!["--profile".to_owned(), custom.to_owned()],
    }
}

/// Runs `command` to completion within `limit`, returning its stdout.
fn run_bounded(mut command: Command, limit: Duration) -> String {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cargo runs");
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let status = wait_bounded(&mut child, limit);
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    match status {
        Some(status) if status.success() => stdout,
        Some(status) => panic!("building the example failed ({status}):\n{stderr}"),
        None => panic!("building the example took more than {limit:?}:\n{stderr}"),
    }
}

/// Waits for `child` to exit, or kills it after `limit`; `None` if it was killed.
pub fn wait_bounded(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Reads all of `from` on a thread of its own, so that a full pipe never
/// blocks the child writing to it.
pub fn drain(mut from: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = from.read_to_string(&mut text);
        text
    })
}
