//! Task ids the client sees: the server's task id and the task's tool, carried
//! in the id itself, so that any replica of the proxy rewraps the task's result
//! with the right tool without a store shared between replicas.
//!
//! A task created by a `tools/call` through the proxy reaches the client as
//! `mte1.<tool>.<task id>.<check>`: the tool name and the server's task id, each
//! as lower-case hex of its UTF-8 bytes, and an FNV-1a checksum (32 bits, hex)
//! of both. Every message the client sends to the MCP endpoint has such ids
//! translated back before it goes upstream; every message of the exchange that
//! comes back has the server's ids translated to the client's.
//!
//! The checksum catches an id cut or garbled on the way; it is no signature (the
//! replicas share no key), and need not be one: an id is only ever turned into
//! the server's task id, which the server checks as it would any id a client
//! sends, and a tool name, which the renderer writes quoted into the element's
//! attribute. A forged id can name another tool for a task, in the text the
//! forger reads, and nothing more. An id that is not a whole, well-formed
//! envelope (a task created before the proxy was there, a garbled id) goes to
//! the server as it is, and the server answers it as an unknown task.
//!
//! Where task ids are read, in both protocol revisions (2025-11-25 and
//! 2026-07-28): `params.taskId` (`tasks/get`, `tasks/result`, `tasks/cancel`,
//! `notifications/tasks/status`), `result.taskId` (a 2026-07-28 task handle, a
//! task's status), `result.task.taskId` (a 2025-11-25 handle),
//! `result.tasks[].taskId` (a `tasks/list` answer), and the
//! `io.modelcontextprotocol/related-task` entry of `params._meta` or
//! `result._meta`; and in the `Mcp-Name` header of a request (2026-07-28).
//! Nothing else in a message is touched: a tool's own output
//! may hold a `taskId` of its own.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use hyper::header::{HeaderMap, HeaderValue};
use serde_json::{Map, Value};

use crate::jsonrpc::message::answers;
use crate::upstream::sse;

/// What starts the ids the proxy makes (and names the format's version).
const PREFIX: &str = "mte1";

/// The header that repeats the name a request is about (2026-07-28).
const MCP_NAME: &str = "mcp-name";

/// The `_meta` key that ties a message to a task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The id the client sees for the server's task `task_id` of `tool`.
pub(crate) fn envelope(tool: &str, task_id: &str) -> String {
    format!(
        "{PREFIX}.{}.{}.{:08x}",
        hex(tool.as_bytes()),
        hex(task_id.as_bytes()),
        checksum(tool, task_id)
    )
}

/// The tool and the server's task id of an id made by [`envelope`]; `None` for
/// any other text.
pub(crate) fn open(id: &str) -> Option<(String, String)> {
    let mut parts = id.split('.');
    let (Some(PREFIX), Some(tool), Some(task_id), Some(check), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    let tool = String::from_utf8(unhex(tool)?).ok()?;
    let task_id = String::from_utf8(unhex(task_id)?).ok()?;
    (check == format!("{:08x}", checksum(&tool, &task_id))).then_some((tool, task_id))
}

/// Translates the client's ids in `message` (a message or a batch) to the
/// server's; returns the tool and the server's id of each one translated.
pub(crate) fn to_upstream(message: &mut Value) -> Vec<(String, String)> {
    let mut opened = Vec::new();
    each_message(message, |message| {
        each_task_id(message, |id| {
            if let Some((tool, task_id)) = open(id) {
                *id = task_id.clone();
                opened.push((tool, task_id));
            }
        });
    });
    opened
}

/// Whether a request (its JSON `bytes` and its `headers`) may hold a task id
/// of the proxy's, which [`to_upstream`] and [`header_to_upstream`] would
/// translate: its prefix somewhere, or an escape (`\u`) that may spell it,
/// which only reading the message tells.
pub(crate) fn may_name_a_task(bytes: &[u8], headers: &HeaderMap) -> bool {
    let prefix = [PREFIX.as_bytes(), b"."].concat();
    memchr::memmem::find(bytes, &prefix).is_some()
        || has_escape(bytes)
        || headers
            .get(MCP_NAME)
            .is_some_and(|name| name.as_bytes().starts_with(&prefix))
}

/// Whether the message `bytes` (JSON) may hold a task id at all: a member
/// named `taskId`, or an escape that may spell one.
fn may_hold_task_ids(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, b"taskId").is_some() || has_escape(bytes)
}

/// Whether JSON `bytes` hold a `\u` escape, which may spell any name.
fn has_escape(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, b"\\u").is_some()
}

/// The `Mcp-Name` header, in which 2026-07-28 repeats the `params.taskId` of a
/// `tasks/*` request (the server checks that both agree): the client's id
/// there becomes the server's too.
pub(crate) fn header_to_upstream(headers: &mut HeaderMap) {
    let Some(name) = headers.get(MCP_NAME).and_then(|name| name.to_str().ok()) else {
        return;
    };
    if let Some((_, task_id)) = open(name)
        && let Ok(task_id) = HeaderValue::from_str(&task_id)
    {
        headers.insert(MCP_NAME, task_id);
    }
}

/// How many task ids a process remembers with their tools, at most.
pub(crate) const MAX_KNOWN_TASKS: usize = 4096;

/// The tool of each server task id this process saw named with its tool (a
/// handle it translated, an id a client sent), the oldest forgotten first past
/// [`MAX_KNOWN_TASKS`]: so that a message outside the exchange that created
/// the task (a `tasks/list` answer, a status notification on a `GET` stream)
/// gets the client's ids too. A replica that never saw a task leaves its id as
/// the server's there.
#[derive(Debug, Default)]
pub(crate) struct KnownTasks {
    known: Mutex<Known>,
}

#[derive(Debug, Default)]
struct Known {
    tools: HashMap<String, String>,
    /// Oldest first.
    order: VecDeque<String>,
}

impl KnownTasks {
    fn learn(&self, task_id: &str, tool: &str) {
        let mut known = self
            .known
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if known
            .tools
            .insert(task_id.to_owned(), tool.to_owned())
            .is_none()
        {
            known.order.push_back(task_id.to_owned());
        }
        while known.order.len() > MAX_KNOWN_TASKS {
            let oldest = known.order.pop_front().expect("longer than the bound");
            known.tools.remove(&oldest);
        }
    }

    fn tool(&self, task_id: &str) -> Option<String> {
        let known = self
            .known
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        known.tools.get(task_id).cloned()
    }

    fn is_empty(&self) -> bool {
        let known = self
            .known
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        known.tools.is_empty()
    }

    /// How many task ids are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.known.lock().unwrap().tools.len()
    }
}

/// How the server's task ids of one exchange become the client's.
#[derive(Debug)]
pub(crate) struct ToClient {
    /// The tool of each `tools/call` of the request, by request id.
    calls: Vec<(Value, String)>,
    /// The client's id of each server id the request named.
    known: HashMap<String, String>,
    /// What the process knows of other tasks.
    process: Arc<KnownTasks>,
}

impl ToClient {
    /// For the exchange of `request` (already translated by [`to_upstream`],
    /// which returned `opened`), in a process that knows `process`.
    pub(crate) fn new(
        request: &Value,
        opened: &[(String, String)],
        process: Arc<KnownTasks>,
    ) -> Self {
        let mut calls = Vec::new();
        let mut read = |message: &Value| {
            let tool = (message.get("method").and_then(Value::as_str) == Some("tools/call"))
                .then(|| message.get("params")?.get("name")?.as_str())
                .flatten();
            if let (Some(id), Some(tool)) = (message.get("id"), tool) {
                calls.push((id.clone(), tool.to_owned()));
            }
        };
        match request {
            Value::Array(batch) => batch.iter().for_each(&mut read),
            single => read(single),
        }
        for (tool, task_id) in opened {
            process.learn(task_id, tool);
        }
        let known = opened
            .iter()
            .map(|(tool, task_id)| (task_id.clone(), envelope(tool, task_id)))
            .collect();
        Self {
            calls,
            known,
            process,
        }
    }

    /// For the exchange of one `tools/call`, `id`, of `tool`, naming no task.
    pub(crate) fn for_call(id: &Value, tool: &str, process: Arc<KnownTasks>) -> Self {
        Self {
            calls: vec![(id.clone(), tool.to_owned())],
            known: HashMap::new(),
            process,
        }
    }

    /// For messages outside any exchange (a `GET` stream).
    pub(crate) fn outside_exchanges(process: Arc<KnownTasks>) -> Self {
        Self::new(&Value::Null, &[], process)
    }

    /// Whether some message of the exchange may name a task.
    pub(crate) fn is_needed(&self) -> bool {
        !self.calls.is_empty() || !self.known.is_empty() || !self.process.is_empty()
    }

    /// Translates the server's ids in `message` (a message or a batch);
    /// says whether it changed anything.
    pub(crate) fn translate(&self, message: &mut Value) -> bool {
        let mut changed = false;
        each_message(message, |message| {
            let tool = self.tool_of(message).map(str::to_owned);
            // In the answer to a `tools/call`, only a task handle names a task
            // (a tool's result may hold a `taskId` of its own).
            let is_answer = message.get("method").is_none();
            // Read key by key: `Value::pointer` allocates for each segment.
            let result = message.get("result");
            let is_handle = result
                .and_then(|result| result.get("resultType"))
                .and_then(Value::as_str)
                == Some("task")
                || result
                    .and_then(|result| result.get("task")?.get("taskId"))
                    .is_some();
            // The answer to a `tools/call` of this exchange names a task in its
            // handle only; any other message may name one the process knows.
            let answers_a_call = is_answer && tool.is_some();
            each_task_id(message, |id| {
                let client_id = match (self.known.get(id.as_str()), &tool) {
                    (Some(known), _) => known.clone(),
                    (None, Some(tool)) if is_handle || !is_answer => {
                        self.process.learn(id, tool);
                        envelope(tool, id)
                    }
                    (None, _) if !answers_a_call => match self.process.tool(id) {
                        Some(tool) => envelope(&tool, id),
                        None => return,
                    },
                    _ => return,
                };
                *id = client_id;
                changed = true;
            });
        });
        changed
    }

    /// `event` with the server's task ids in its data translated to the
    /// client's (the upstream's bytes kept but for the ids).
    pub(crate) fn event(&self, event: Vec<u8>) -> Vec<u8> {
        if !self.is_needed() {
            return event;
        }
        let Some(data) = sse::data(&event) else {
            return event;
        };
        if !may_hold_task_ids(&data) {
            return event;
        }
        let Ok(mut message) = crate::jsonrpc::nested::from_slice(&data) else {
            return event;
        };
        if !self.translate(&mut message) {
            return event;
        }
        match crate::jsonrpc::splice::rewritten(&data, &message) {
            Some(data) => sse::with_data(&event, &data),
            None => event,
        }
    }

    /// The tool a message of the exchange belongs to: the answer to a
    /// `tools/call` belongs to its tool; any other message, when the request
    /// held one `tools/call`, to that one.
    fn tool_of(&self, message: &Value) -> Option<&str> {
        let is_response = message.get("method").is_none();
        if is_response {
            let id = message.get("id")?;
            return self
                .calls
                .iter()
                .find(|(call, _)| answers(id, call))
                .map(|(_, tool)| tool.as_str());
        }
        match self.calls.as_slice() {
            [(_, tool)] => Some(tool),
            _ => None,
        }
    }
}

fn each_message(message: &mut Value, mut visit: impl FnMut(&mut Value)) {
    match message {
        Value::Array(batch) => batch.iter_mut().for_each(visit),
        single => visit(single),
    }
}

/// Calls `visit` on every task id of one message, at the places the module
/// docs list.
fn each_task_id(message: &mut Value, mut visit: impl FnMut(&mut String)) {
    let Some(message) = message.as_object_mut() else {
        return;
    };
    for key in ["params", "result"] {
        let Some(Value::Object(body)) = message.get_mut(key) else {
            continue;
        };
        visit_id(body, &mut visit);
        if key == "result"
            && let Some(Value::Object(task)) = body.get_mut("task")
        {
            visit_id(task, &mut visit);
        }
        // A `tasks/list` answer.
        if key == "result"
            && let Some(Value::Array(tasks)) = body.get_mut("tasks")
        {
            for task in tasks.iter_mut().filter_map(Value::as_object_mut) {
                visit_id(task, &mut visit);
            }
        }
        if let Some(Value::Object(meta)) = body.get_mut("_meta")
            && let Some(Value::Object(related)) = meta.get_mut(RELATED_TASK)
        {
            visit_id(related, &mut visit);
        }
    }
}

fn visit_id(object: &mut Map<String, Value>, visit: &mut impl FnMut(&mut String)) {
    if let Some(Value::String(id)) = object.get_mut("taskId") {
        visit(id);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Lower-case hex only, so that each id has one spelling.
fn unhex(text: &str) -> Option<Vec<u8>> {
    fn digit(byte: u8) -> Option<u8> {
        match byte {
            b'0'..=b'9' => Some(byte - b'0'),
            b'a'..=b'f' => Some(byte - b'a' + 10),
            _ => None,
        }
    }
    let bytes = text.as_bytes();
    if bytes.is_empty() || !bytes.len().is_multiple_of(2) {
        return None;
    }
    bytes
        .chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

/// FNV-1a, 32 bits, of the tool, a zero byte, and the task id.
fn checksum(tool: &str, task_id: &str) -> u32 {
    let bytes = tool.bytes().chain([0]).chain(task_id.bytes());
    bytes.fold(0x811c_9dc5, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_envelope_opens_to_what_it_holds() {
        let id = envelope("deploy", "7f3c-task");
        assert_eq!(open(&id), Some(("deploy".into(), "7f3c-task".into())));
    }

    #[test]
    fn a_changed_id_does_not_open() {
        let id = envelope("deploy", "7f3c-task");
        let mut swapped = id.clone().into_bytes();
        // One hex digit of the task id changed: the checksum catches it.
        let at = id.rfind('.').unwrap() - 1;
        swapped[at] = if swapped[at] == b'0' { b'1' } else { b'0' };
        for garbled in [
            String::from_utf8(swapped).unwrap(),
            id[..id.len() - 1].to_owned(),
            id.to_uppercase(),
            format!("{id}.x"),
            "mte1...".to_owned(),
            "task-1".to_owned(),
        ] {
            assert_eq!(open(&garbled), None, "{garbled}");
        }
    }

    #[test]
    fn each_handle_of_a_batch_carries_the_tool_of_its_own_call() {
        let request = json!([
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "b"}},
        ]);
        let to_client = ToClient::new(&request, &[], Arc::default());
        let mut answers = json!([
            {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "task", "taskId": "s2"}},
            {"jsonrpc": "2.0", "id": 1, "result": {"task": {"taskId": "s1"}}},
        ]);
        assert!(to_client.translate(&mut answers));
        assert_eq!(answers[0]["result"]["taskId"], envelope("b", "s2"));
        assert_eq!(answers[1]["result"]["task"]["taskId"], envelope("a", "s1"));
        // With two calls, a notification's task is known from the handles only.
        let mut status = json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
            "params": {"taskId": "s1"}});
        assert!(to_client.translate(&mut status));
        assert_eq!(status["params"]["taskId"], envelope("a", "s1"));
        let mut unknown = json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
            "params": {"taskId": "s3"}});
        assert!(!to_client.translate(&mut unknown));
    }

    #[test]
    fn a_result_that_is_no_handle_keeps_its_task_id() {
        let request =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}});
        let mut answer =
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "taskId": "x"}});
        let unchanged = answer.clone();
        assert!(!ToClient::new(&request, &[], Arc::default()).translate(&mut answer));
        assert_eq!(answer, unchanged);
    }

    #[test]
    fn only_the_places_of_task_ids_are_translated() {
        let id = envelope("t", "s1");
        let mut message = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
            "params": {"taskId": id, "arguments": {"taskId": id}}});
        assert_eq!(to_upstream(&mut message), [("t".into(), "s1".into())]);
        assert_eq!(message["params"]["taskId"], "s1");
        assert_eq!(message["params"]["arguments"]["taskId"], id);
    }

    #[test]
    fn a_task_list_names_the_tasks_the_process_knows_by_the_clients_ids() {
        let process = Arc::new(KnownTasks::default());
        let call =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "build"}});
        let mut handle = json!({"jsonrpc": "2.0", "id": 1, "result": {"task": {"taskId": "t-1"}}});
        assert!(ToClient::new(&call, &[], process.clone()).translate(&mut handle));

        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/list"});
        let mut listed = json!({"jsonrpc": "2.0", "id": 2, "result": {"tasks": [
            {"taskId": "t-1", "status": "working"}, {"taskId": "t-2", "status": "working"}]}});
        assert!(ToClient::new(&list, &[], process.clone()).translate(&mut listed));
        assert_eq!(
            listed["result"]["tasks"][0]["taskId"],
            envelope("build", "t-1")
        );
        assert_eq!(listed["result"]["tasks"][1]["taskId"], "t-2");

        let mut status = json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                                "params": {"taskId": "t-1", "status": "completed"}});
        assert!(ToClient::outside_exchanges(process).translate(&mut status));
        assert_eq!(status["params"]["taskId"], envelope("build", "t-1"));
    }

    /// `levels` arrays nested in one another around an empty one.
    fn nested(levels: usize) -> String {
        format!("{}{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn task_ids_beside_json_of_any_depth_are_translated() {
        let call =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "build"}});
        for levels in [200, 100_000] {
            let to_client = ToClient::new(&call, &[], Arc::default());
            // A status notification of the call's task, in an event.
            let data = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{{"taskId":"t-1","status":"working","deep":{}}}}}"#,
                nested(levels)
            );
            let event = to_client.event(format!("data: {data}\n\n").into_bytes());
            let expected = data.replace("t-1", &envelope("build", "t-1"));
            assert_eq!(
                String::from_utf8(event).unwrap(),
                format!("data: {expected}\n\n"),
                "{levels} levels"
            );

            // A task handle in a JSON body, and the client's id in a request.
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"task":{{"taskId":"t-2"}},"deep":{}}}}}"#,
                nested(levels)
            );
            let mut answer = crate::jsonrpc::nested::from_slice(body.as_bytes()).unwrap();
            assert!(to_client.translate(&mut answer));
            let rewritten = crate::jsonrpc::splice::rewritten(body.as_bytes(), &answer).unwrap();
            let client_id = envelope("build", "t-2");
            assert_eq!(
                String::from_utf8(rewritten).unwrap(),
                body.replace("t-2", &client_id)
            );
            let request = format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{{"taskId":"{client_id}","deep":{}}}}}"#,
                nested(levels)
            );
            let mut message = crate::jsonrpc::nested::from_slice(request.as_bytes()).unwrap();
            assert_eq!(to_upstream(&mut message), [("build".into(), "t-2".into())]);
            assert_eq!(message["params"]["taskId"], "t-2");
        }
    }

    #[test]
    fn the_process_remembers_the_newest_tasks_up_to_its_bound() {
        let process = KnownTasks::default();
        for n in 0..MAX_KNOWN_TASKS * 3 {
            process.learn(&format!("t-{n}"), "build");
        }
        assert_eq!(process.len(), MAX_KNOWN_TASKS);
        assert!(
            process
                .tool(&format!("t-{}", MAX_KNOWN_TASKS * 3 - 1))
                .is_some()
        );
        assert!(
            process
                .tool(&format!("t-{}", MAX_KNOWN_TASKS * 2))
                .is_some()
        );
        assert!(
            process
                .tool(&format!("t-{}", MAX_KNOWN_TASKS * 2 - 1))
                .is_none()
        );
    }
}
