//! A `tools/call` result as a JSON object.

use serde_json::{Map, Value};

use crate::exchange::ToolCallResult;

impl ToolCallResult for Map<String, Value> {
    fn error_texts(&mut self) -> Option<impl Iterator<Item = &mut String>> {
        if self.get("isError") != Some(&Value::Bool(true)) {
            return None;
        }
        let content = self.get_mut("content")?.as_array_mut()?;
        // Malformed text items make the whole result untouchable.
        if content
            .iter()
            .any(|item| is_text_item(item) && !item["text"].is_string())
        {
            return None;
        }
        Some(content.iter_mut().filter_map(|item| {
            if !is_text_item(item) {
                return None;
            }
            match item.get_mut("text") {
                Some(Value::String(text)) => Some(text),
                _ => None,
            }
        }))
    }

    fn insert_text(&mut self, text: String) {
        if let Some(Value::Array(content)) = self.get_mut("content") {
            content.insert(0, text_item(text));
        }
    }
}

/// A `{"type": "text", "text": ...}` content item.
pub(super) fn text_item(text: String) -> Value {
    let mut item = Map::with_capacity(2);
    item.insert("type".to_owned(), Value::from("text"));
    item.insert("text".to_owned(), Value::String(text));
    Value::Object(item)
}

fn is_text_item(item: &Value) -> bool {
    item.get("type").and_then(Value::as_str) == Some("text")
}
