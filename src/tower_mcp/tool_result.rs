//! tower-mcp's typed `tools/call` result.

use ::tower_mcp::{CallToolResult, Content};

use crate::exchange::ToolResult;

/// The typed result cannot be malformed, so an `isError` result is always
/// rewritable: its text items are the `Content::Text` items.
impl ToolResult for CallToolResult {
    fn error_texts(&mut self) -> Option<impl Iterator<Item = &mut String>> {
        if !self.is_error {
            return None;
        }
        Some(self.content.iter_mut().filter_map(|item| match item {
            Content::Text { text, .. } => Some(text),
            _ => None,
        }))
    }

    fn insert_text(&mut self, text: String) {
        let item = Content::Text {
            text,
            annotations: None,
            meta: None,
        };
        self.content.insert(0, item);
    }
}
