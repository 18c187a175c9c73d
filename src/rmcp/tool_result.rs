//! An rmcp [`CallToolResult`] as the layer sees it.

use rmcp::model::{CallToolResult, ContentBlock};

use crate::model::ToolResult;

impl ToolResult for CallToolResult {
    fn error_texts(&mut self) -> Option<impl Iterator<Item = &mut String>> {
        if self.is_error != Some(true) {
            return None;
        }
        Some(self.content.iter_mut().filter_map(|block| match block {
            ContentBlock::Text(text) => Some(&mut text.text),
            _ => None,
        }))
    }

    fn insert_text(&mut self, text: String) {
        self.content.insert(0, ContentBlock::text(text));
    }
}
