//! What a message is, the one rule every reader of a message applies: a
//! request (a `method` that is a string, and an `id`), a notification (such a
//! `method` and no `id`), a response (an `id` and no `method`), or nothing
//! JSON-RPC knows ([`Kind::of`]). A message read whole is read here, a batch's
//! members one by one: a request's id, its method, its progress token, the
//! tool or task it names; a notification's method (a cancellation names the
//! request it cancels); a response's id. Every mode reads a message's
//! requests, cancellations and responses here, so that a member's id and its
//! progress token are always the same member's, and an invalid member shifts
//! no other. The envelope of a line (`envelope`) and the scan of a message too
//! long to hold (`member_scan`) read the `id` and the `method` their own way,
//! fast, and ask [`Kind::of`] what the message is.

use serde_json::Value;

use crate::jsonrpc::method::Method;

/// What a message is, by its `id` and its `method`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A method and an id: an answer is expected.
    Request,
    /// A method and no id.
    Notification,
    /// An id and no method: an answer to a request of the other side.
    Response,
    /// A method that is not a string, or neither a method nor an id, or not
    /// an object.
    Invalid,
}

/// What a message's `method` member holds, as far as [`Kind::of`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum MethodMember {
    /// No `method`.
    #[default]
    Absent,
    /// A `method` that is a string.
    Name,
    /// A `method` that is any other value.
    NotAName,
}

impl Kind {
    /// What a message is that has an `id` (whatever its value) or not, and
    /// whose `method` is `method`. An object that names a member twice is
    /// read by its last one, as `serde_json::Value` reads it.
    pub(crate) fn of(has_id: bool, method: MethodMember) -> Self {
        match (method, has_id) {
            (MethodMember::Name, true) => Self::Request,
            (MethodMember::Name, false) => Self::Notification,
            (MethodMember::Absent, true) => Self::Response,
            (MethodMember::Absent | MethodMember::NotAName, _) => Self::Invalid,
        }
    }
}

impl MethodMember {
    /// What the `method` member `method` holds.
    fn of(method: Option<&Value>) -> Self {
        match method {
            None => Self::Absent,
            Some(Value::String(_)) => Self::Name,
            Some(_) => Self::NotAName,
        }
    }
}

/// The method of a cancellation, whose `params.requestId` names the request
/// it cancels.
const CANCELLED: &str = "notifications/cancelled";

/// Whether a notification of `method` cancels a request.
pub(crate) fn cancels(method: &str) -> bool {
    method == CANCELLED
}

/// One message, or one member of a batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Member<'a> {
    /// A method and an id: an answer is expected.
    Request(Request<'a>),
    /// A method and no id.
    Notification(Notification<'a>),
    /// An id and no method: an answer to a request of the other side.
    Response { id: &'a Value },
    /// Not an object, or a method that is not a string, or neither a method
    /// nor an id: the receiver answers it as JSON-RPC says, if it can.
    Invalid,
}

/// A request: what the bridge and the relays need of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Request<'a> {
    pub(crate) id: &'a Value,
    pub(crate) method: &'a str,
    /// Its `params._meta.progressToken`: the progress notifications about it
    /// name it.
    pub(crate) progress_token: Option<&'a Value>,
    /// The tool a `tools/call` calls (`params.name`).
    pub(crate) tool: Option<&'a str>,
    /// The task a `tasks/get` or `tasks/result` names (`params.taskId`).
    pub(crate) task_id: Option<&'a str>,
}

/// A notification: its method and its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Notification<'a> {
    pub(crate) method: &'a str,
    pub(crate) params: Option<&'a Value>,
}

impl Request<'_> {
    /// Whether the request is a `tools/call`, whose error the layer renders.
    pub(crate) fn is_tool_call(&self) -> bool {
        Method::calls_a_tool(self.method)
    }
}

impl<'a> Notification<'a> {
    /// The id of the request a `notifications/cancelled` cancels.
    pub(crate) fn cancelled_id(&self) -> Option<&'a Value> {
        self.param(CANCELLED, "requestId")
    }

    /// The token a `notifications/progress` reports on.
    pub(crate) fn progress_token(&self) -> Option<&'a Value> {
        self.param("notifications/progress", "progressToken")
    }

    fn param(&self, method: &str, name: &str) -> Option<&'a Value> {
        (self.method == method).then(|| self.params?.get(name))?
    }
}

impl<'a> Member<'a> {
    /// What `message` (one message, not a batch) is.
    pub(crate) fn of(message: &'a Value) -> Self {
        let Some(object) = message.as_object() else {
            return Self::Invalid;
        };
        let id = object.get("id");
        let method = object.get("method");
        let kind = Kind::of(id.is_some(), MethodMember::of(method));
        // Looked up member by member: `Value::pointer` allocates for each
        // step of its path.
        let param = |name: &str| object.get("params")?.get(name);
        match (kind, id, method.and_then(Value::as_str)) {
            (Kind::Request, Some(id), Some(method)) => Self::Request(Request {
                id,
                method,
                progress_token: param("_meta").and_then(|meta| meta.get("progressToken")),
                tool: param("name").and_then(Value::as_str),
                task_id: param("taskId").and_then(Value::as_str),
            }),
            (Kind::Notification, _, Some(method)) => Self::Notification(Notification {
                method,
                params: object.get("params"),
            }),
            (Kind::Response, Some(id), _) => Self::Response { id },
            _ => Self::Invalid,
        }
    }

    /// What this is.
    #[cfg(test)]
    pub(crate) fn kind(self) -> Kind {
        match self {
            Self::Request(_) => Kind::Request,
            Self::Notification(_) => Kind::Notification,
            Self::Response { .. } => Kind::Response,
            Self::Invalid => Kind::Invalid,
        }
    }

    /// The request this is, if it is one.
    pub(crate) fn request(self) -> Option<Request<'a>> {
        match self {
            Self::Request(request) => Some(request),
            _ => None,
        }
    }

    /// The id of the request this cancels, if it is a cancellation.
    pub(crate) fn cancelled_id(self) -> Option<&'a Value> {
        match self {
            Self::Notification(notification) => notification.cancelled_id(),
            _ => None,
        }
    }

    /// The id this answers, if it is a response.
    pub(crate) fn response_id(self) -> Option<&'a Value> {
        match self {
            Self::Response { id } => Some(id),
            _ => None,
        }
    }
}

/// The members of `message`, in order: the message itself, or each member of
/// a batch.
pub(crate) fn members(message: &Value) -> Vec<Member<'_>> {
    match message {
        Value::Array(batch) => batch.iter().map(Member::of).collect(),
        single => vec![Member::of(single)],
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_invalid_member_shifts_no_other() {
        let batch = json!([
            {"jsonrpc": "2.0", "id": "x", "method": 5},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": {"progressToken": "p1"}}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}},
            {"jsonrpc": "2.0", "id": 9, "result": {}},
            3,
        ]);
        let members = members(&batch);
        assert_eq!(members[0], Member::Invalid);
        let request = members[1].request().expect("a request");
        assert_eq!(
            (request.id, request.method, request.progress_token),
            (&json!(1), "tools/call", Some(&json!("p1")))
        );
        assert_eq!(members[2].cancelled_id(), Some(&json!(7)));
        assert_eq!(members[3].response_id(), Some(&json!(9)));
        assert_eq!(members[4], Member::Invalid);
    }

    #[test]
    fn a_message_is_what_its_id_and_its_last_method_make_it() {
        let kind = |message: Value| Member::of(&message).kind();
        assert_eq!(kind(json!({"id": 1, "method": "ping"})), Kind::Request);
        assert_eq!(kind(json!({"id": null, "method": "ping"})), Kind::Request);
        assert_eq!(kind(json!({"method": "ping"})), Kind::Notification);
        assert_eq!(kind(json!({"id": 1, "result": {}})), Kind::Response);
        assert_eq!(
            kind(json!({"id": 1, "result": {}, "method": "x"})),
            Kind::Request
        );
        assert_eq!(kind(json!({"id": 1, "method": 5})), Kind::Invalid);
        assert_eq!(kind(json!({"jsonrpc": "2.0"})), Kind::Invalid);
        assert_eq!(kind(json!([{"id": 1}])), Kind::Invalid);
        let last: Value =
            serde_json::from_str(r#"{"id":1,"method":"ping","method":null}"#).unwrap();
        assert_eq!(Member::of(&last).kind(), Kind::Invalid);
    }

    #[test]
    fn a_cancellation_with_an_id_is_a_request_and_cancels_nothing() {
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "notifications/cancelled", "params": {"requestId": 7}});
        assert_eq!(Member::of(&message).cancelled_id(), None);
    }
}
