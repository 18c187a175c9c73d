//! Which calls the layer holds a timer for, in every mode: a call of any other
//! tool need not go through the layer while it runs.

/// The tools whose calls the layer holds a timer for: every tool with
/// `--tool-timeout`, else those `--tool-timeout-for` names. A call of any other
/// tool need not go through the layer while it runs: its answer does, when it
/// comes.
#[derive(Debug, Clone)]
pub(crate) struct TimedTools {
    every: bool,
    named: Vec<String>,
}

impl TimedTools {
    /// `every` tool, or those `named`.
    pub(crate) fn new(every: bool, named: Vec<String>) -> Self {
        Self { every, named }
    }

    /// Whether a call of `tool` is timed.
    pub(crate) fn includes(&self, tool: &str) -> bool {
        self.every || self.named.iter().any(|named| named == tool)
    }
}
