//! Running a server, bare or through the wrapper, and talking to it line by line.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The bound on every wait for a line or an exit.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// The wrapper under test: the executable that `MCP_TOOL_ERRORS_BIN` names
/// when set (scripts/ci/wheel.sh names the one a Python wheel installed), else
/// the one cargo built for this test run.
pub(crate) fn wrapper() -> &'static Path {
    static WRAPPER: OnceLock<PathBuf> = OnceLock::new();
    WRAPPER.get_or_init(|| {
        std::env::var_os("MCP_TOOL_ERRORS_BIN").map_or_else(
            || PathBuf::from(env!("CARGO_BIN_EXE_mcp-tool-errors")),
            PathBuf::from,
        )
    })
}

/// This process's `PATH` without the directories that hold `cargo` or
/// `rustc`: a session's wrapper runs as it would for a user who has no Rust
/// toolchain (the servers of these tests are started by their full paths).
pub(crate) fn path_without_rust() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let holds_rust = |dir: &Path| dir.join("cargo").exists() || dir.join("rustc").exists();
    let kept = std::env::split_paths(&path).filter(|dir| !holds_rust(dir));
    let kept = std::env::join_paths(kept).expect("directories that were in PATH join again");
    kept.into_string().expect("PATH is UTF-8")
}

/// Runs the wrapper with `args` and no stdin to its end: its status and output.
pub(crate) async fn run_wrapper(args: &[&str]) -> std::process::Output {
    let output = Command::new(wrapper())
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(PATIENCE, output)
        .await
        .unwrap_or_else(|_| panic!("{args:?} did not end within {PATIENCE:?}"))
        .expect("the wrapper runs")
}

/// A server's command line.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
}

impl Server {
    pub(crate) fn new(program: impl Into<PathBuf>, args: &[&str]) -> Self {
        Self {
            program: program.into(),
            args: args.iter().map(|arg| arg.to_string()).collect(),
            env: Vec::new(),
        }
    }

    /// The scripted example server, following `script`.
    pub(crate) fn scripted(script: Value) -> Self {
        let mut server = Self::new(scripted_server(), &[]);
        server
            .env
            .push(("SCRIPTED_SERVER".to_owned(), script.to_string()));
        server
    }
}

/// A running process with piped stdio.
pub(crate) struct Session {
    process: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<String>>,
    /// The task reading stderr, until the pipe's end.
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

impl Session {
    /// The server alone.
    pub(crate) fn bare(server: &Server) -> Self {
        Self::spawn(&server.program, &server.args, &server.env)
    }

    /// The server through the wrapper, with the wrapper's `options`, then `--`.
    pub(crate) fn wrapped(options: &[&str], server: &Server) -> Self {
        Self::wrapped_after(options, &["--"], server)
    }

    /// The server through the wrapper, its command right after the wrapper's
    /// `options`, without `--`, as hosts that drop it launch it.
    pub(crate) fn wrapped_without_dashes(options: &[&str], server: &Server) -> Self {
        Self::wrapped_after(options, &[], server)
    }

    fn wrapped_after(options: &[&str], separator: &[&str], server: &Server) -> Self {
        let mut args: Vec<String> = options.iter().map(|option| option.to_string()).collect();
        args.extend(separator.iter().map(|separator| separator.to_string()));
        args.push(server.program.to_string_lossy().into_owned());
        args.extend(server.args.iter().cloned());
        let mut env = server.env.clone();
        env.push(("PATH".to_owned(), path_without_rust()));
        Self::spawn(wrapper(), &args, &env)
    }

    fn spawn(program: &Path, args: &[String], env: &[(String, String)]) -> Self {
        let mut process = Command::new(program)
            .args(args)
            .envs(env.iter().map(|(key, value)| (key, value)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|error| panic!("{} starts: {error}", program.display()));
        let stdin = process.stdin.take();
        let stdout = BufReader::new(process.stdout.take().expect("stdout is piped"));
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = process.stderr.take().expect("stderr is piped");
        let collected = stderr.clone();
        let stderr_reader = tokio::spawn(async move {
            let mut buffer = [0; 4096];
            while let Ok(read @ 1..) = pipe.read(&mut buffer).await {
                let text = String::from_utf8_lossy(&buffer[..read]);
                collected.lock().unwrap().push_str(&text);
            }
        });
        Self {
            process,
            stdin,
            stdout,
            stderr,
            stderr_reader: Some(stderr_reader),
        }
    }

    /// Writes `line` and a newline.
    pub(crate) async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin
            .write_all(line.as_bytes())
            .await
            .expect("stdin takes the line");
        stdin.write_all(b"\n").await.expect("stdin takes the line");
        stdin.flush().await.expect("stdin flushes");
    }

    /// Sends `message` and returns the next line.
    pub(crate) async fn line_after(&mut self, message: &Value) -> String {
        self.send(&message.to_string()).await;
        self.line().await
    }

    /// The next line, without its newline; `None` at EOF.
    pub(crate) async fn line_or_eof(&mut self) -> Option<String> {
        let mut line = String::new();
        let read = tokio::time::timeout(PATIENCE, self.stdout.read_line(&mut line))
            .await
            .unwrap_or_else(|_| panic!("no line within {PATIENCE:?}; stderr:\n{}", self.stderr()))
            .expect("stdout is readable");
        (read > 0).then(|| line.strip_suffix('\n').unwrap_or(&line).to_owned())
    }

    /// The next line, without its newline.
    pub(crate) async fn line(&mut self) -> String {
        match self.line_or_eof().await {
            Some(line) => line,
            None => panic!("stdout ended; stderr:\n{}", self.stderr()),
        }
    }

    /// Lines up to and including the response with `id`.
    pub(crate) async fn until_answer(&mut self, id: &Value) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let line = self.line().await;
            let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            let done = message.get("method").is_none() && message.get("id") == Some(id);
            lines.push(line);
            if done {
                return lines;
            }
        }
    }

    /// Sends `request` and returns the lines up to and including its answer.
    pub(crate) async fn exchange(&mut self, request: &Value) -> Vec<String> {
        self.send(&request.to_string()).await;
        self.until_answer(&request["id"]).await
    }

    /// The MCP handshake; returns the lines up to the initialize answer.
    pub(crate) async fn initialize(&mut self) -> Vec<String> {
        let lines = self
            .exchange(&json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "mcp-tool-errors-tests", "version": "0"},
                },
            }))
            .await;
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        lines
    }

    /// Closes stdin: the end of the client.
    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for the exit.
    pub(crate) async fn wait(&mut self) -> ExitStatus {
        tokio::time::timeout(PATIENCE, self.process.wait())
            .await
            .unwrap_or_else(|_| panic!("no exit within {PATIENCE:?}; stderr:\n{}", self.stderr()))
            .expect("the process is waited for")
    }

    /// Whether the process has exited (without waiting).
    pub(crate) fn has_exited(&mut self) -> bool {
        self.process
            .try_wait()
            .expect("the process is polled")
            .is_some()
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.process.id().expect("the process runs")
    }

    /// Everything written to stderr so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// All that is written to stderr, once every process holding the pipe has
    /// closed it (after [`Session::wait`]).
    pub(crate) async fn stderr_to_end(&mut self) -> String {
        if let Some(reader) = self.stderr_reader.take() {
            tokio::time::timeout(PATIENCE, reader)
                .await
                .unwrap_or_else(|_| panic!("stderr did not end within {PATIENCE:?}"))
                .expect("the stderr reader ends");
        }
        self.stderr()
    }

    /// Waits until stderr holds `text`.
    pub(crate) async fn stderr_shows(&self, text: &str) {
        let waited = tokio::time::timeout(PATIENCE, async {
            while !self.stderr().contains(text) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        if waited.await.is_err() {
            panic!("stderr never showed {text:?}:\n{}", self.stderr());
        }
    }
}

/// A scripted child's action: write `text` (see examples/scripted_stdio_server.rs).
pub(crate) fn send(text: &str) -> Value {
    json!({"send": text})
}

/// A scripted child's line that echoes a received line back as the params of a
/// `test/got` notification, so a test sees the bytes the child got.
pub(crate) const GOT: &str = r#"{"jsonrpc":"2.0","method":"test/got","params":$LINE}"#;

/// A `tools/call` request.
pub(crate) fn tool_call(id: i64, tool: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    })
}

/// The only text of an answer's result.
pub(crate) fn result_text(line: &str) -> String {
    let answer: Value = serde_json::from_str(line).expect("the answer is JSON");
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {line}"))
        .to_owned()
}

/// Whether the servers installed by scripts/install-test-servers.sh must be
/// there: a missing one fails the test instead of skipping it.
fn servers_required() -> bool {
    std::env::var_os("MCP_TOOL_ERRORS_REQUIRE_SERVERS").is_some()
}

/// `path` under the repository's `.tools/`, if installed.
pub(crate) fn installed(path: &str, what: &str) -> Option<PathBuf> {
    let full = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../.tools")
        .join(path);
    if full.exists() {
        return Some(full);
    }
    let message = format!(
        "{what} is not installed ({} is missing): run scripts/install-test-servers.sh",
        full.display()
    );
    if servers_required() {
        panic!("{message} (MCP_TOOL_ERRORS_REQUIRE_SERVERS is set)");
    }
    eprintln!("skipped: {message}");
    None
}

/// The scripted example server, built by cargo with this run's profile and
/// features so that the build is the one `cargo test` just made.
fn scripted_server() -> PathBuf {
    crate::example::example_binary("scripted_stdio_server")
}

/// Sends signal `name` (`INT`, `TERM`, `KILL`...) to process `pid`.
pub(crate) fn signal(pid: u32, name: &str) {
    let kill = std::process::Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status();
    assert!(kill.expect("kill runs").success(), "kill -{name} {pid}");
}

/// The fields of `/proc/PID/stat` after the command name: state, parent,
/// process group...; `None` once the process is gone.
fn proc_stat(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, fields) = stat.rsplit_once(')')?;
    Some(fields.split_whitespace().map(str::to_owned).collect())
}

/// The processes whose parent is `pid`.
pub(crate) fn children_of(pid: u32) -> Vec<u32> {
    let entries = std::fs::read_dir("/proc").expect("/proc is listed");
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&candidate| {
            proc_stat(candidate).is_some_and(|fields| fields[1] == pid.to_string())
        })
        .collect()
}

/// The processes of the process group `group` that still run.
#[allow(dead_code, reason = "the bridge's tests use it, in the `http` binary")]
pub(crate) fn running_in_group(group: u32) -> Vec<u32> {
    let entries = std::fs::read_dir("/proc").expect("/proc is listed");
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&candidate| {
            proc_stat(candidate)
                .is_some_and(|fields| fields[2] == group.to_string() && fields[0] != "Z")
        })
        .collect()
}

/// The process group of `pid`.
pub(crate) fn process_group(pid: u32) -> u32 {
    let fields = proc_stat(pid).unwrap_or_else(|| panic!("process {pid} is gone"));
    fields[2].parse().expect("a process group id")
}

/// Whether `pid` has exited and waits to be reaped.
#[allow(dead_code, reason = "the `cli` binary's tests use it")]
pub(crate) fn is_zombie(pid: u32) -> bool {
    proc_stat(pid).is_some_and(|fields| fields[0] == "Z")
}

/// Whether `pid` still runs: neither gone nor a zombie waiting to be reaped.
pub(crate) fn runs(pid: u32) -> bool {
    proc_stat(pid).is_some_and(|fields| fields[0] != "Z")
}
