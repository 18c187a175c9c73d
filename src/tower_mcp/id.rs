//! tower-mcp's request id as the layer's [`RequestId`].

use ::tower_mcp::RequestId as RouterId;
use serde_json::Value;

use crate::model::request_id::RequestId;

impl From<&RouterId> for RequestId {
    fn from(id: &RouterId) -> Self {
        match id {
            RouterId::Number(n) => Self::Number((*n).into()),
            RouterId::String(s) => Self::String(s.as_str().into()),
            // `RouterId` is `#[non_exhaustive]`: a kind of id this version does
            // not know is kept as its JSON, so the answer still echoes it.
            other => Self::from_value(&serde_json::to_value(other).unwrap_or(Value::Null)),
        }
    }
}

/// `own`, which was read from a tower-mcp id, as that id again.
pub(super) fn to_router_id(own: &RequestId) -> RouterId {
    let direct = match own {
        RequestId::String(s) => Some(RouterId::String(s.to_string())),
        RequestId::Number(n) => n.as_i64().map(RouterId::Number),
        _ => None,
    };
    direct.unwrap_or_else(|| {
        RouterId::from_json(&own.to_value())
            .expect("an id read from a tower-mcp RequestId converts back to one")
    })
}
