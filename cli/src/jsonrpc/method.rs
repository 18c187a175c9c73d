//! A request's method, in every mode: the methods the command tells apart,
//! and what a request of each names to the layer (a tool, a task, nothing).

/// A request's method: the ones the relay tells apart without an allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Method {
    ToolsCall,
    ToolsList,
    TasksGet,
    TasksResult,
    Other(Box<str>),
}

/// What a request names to the layer ([`Method::named`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Named {
    /// The tool it calls, its `params.name`.
    Tool,
    /// The task it asks about, its `params.taskId`.
    Task,
}

impl Named {
    /// The member of `params` that holds it.
    pub(crate) fn param(self) -> &'static str {
        match self {
            Self::Tool => "name",
            Self::Task => "taskId",
        }
    }

    /// Which of a request's `tool` and `task` it is.
    pub(crate) fn of<T>(self, tool: Option<T>, task: Option<T>) -> Option<T> {
        match self {
            Self::Tool => tool,
            Self::Task => task,
        }
    }
}

impl Method {
    /// The method named `method`.
    pub(crate) fn read(method: &str) -> Self {
        Self::known(method).unwrap_or_else(|| Self::Other(method.into()))
    }

    /// The method named `method`, when it is one the command tells apart.
    pub(crate) fn known(method: &str) -> Option<Self> {
        Some(match method {
            "tools/call" => Self::ToolsCall,
            "tools/list" => Self::ToolsList,
            "tasks/get" => Self::TasksGet,
            "tasks/result" => Self::TasksResult,
            _ => return None,
        })
    }

    /// Whether a request of `method` calls a tool (a `tools/call`), whose
    /// errors the layer renders.
    pub(crate) fn calls_a_tool(method: &str) -> bool {
        Self::known(method) == Some(Self::ToolsCall)
    }

    /// What a request of this method names to the layer: a `tools/call` its
    /// tool, a `tasks/get` or `tasks/result` its task, any other nothing.
    pub(crate) fn named(&self) -> Option<Named> {
        match self {
            Self::ToolsCall => Some(Named::Tool),
            Self::TasksGet | Self::TasksResult => Some(Named::Task),
            Self::ToolsList | Self::Other(_) => None,
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::ToolsCall => "tools/call",
            Self::ToolsList => "tools/list",
            Self::TasksGet => "tasks/get",
            Self::TasksResult => "tasks/result",
            Self::Other(method) => method,
        }
    }
}
