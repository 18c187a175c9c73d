//! The child's environment: by default the command's whole environment
//! (whatever secrets it holds: an OTLP exporter's headers, a cloud
//! provider's keys); with `--env-clear`, only the variables `--env NAME`
//! names, each with its value in the command's environment. One place for
//! every child: the stdio mode's and each of the bridge's sessions'.

use std::ffi::OsString;

use crate::options::Options;

/// Gives `command` the environment the options ask for.
pub(crate) fn apply(options: &Options, command: &mut tokio::process::Command) {
    if !options.env_clear {
        return;
    }
    command.env_clear();
    for name in &options.env {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
}

/// The child's `PATH`, where its command is looked up: `None` when it has
/// none.
pub(crate) fn search_path(options: &Options) -> Option<OsString> {
    let passed = !options.env_clear || options.env.iter().any(|name| name == "PATH");
    passed.then(|| std::env::var_os("PATH")).flatten()
}
