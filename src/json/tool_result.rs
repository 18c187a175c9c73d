//! A `tools/call` result as a JSON object.

use serde_json::{Map, Value};

use super::field::{field, field_mut, str_field};
use crate::model::ToolResult;

impl ToolResult for Map<String, Value> {
    fn error_texts(&mut self) -> Option<impl Iterator<Item = &mut String>> {
        let (mut is_error, mut content) = (false, None);
        for (key, value) in self.iter_mut() {
            match key.as_str() {
                "isError" => is_error = matches!(value, Value::Bool(true)),
                "content" => content = Some(value),
                _ => {}
            }
        }
        if !is_error {
            return None;
        }
        let content = content?.as_array_mut()?;
        // Malformed text items make the whole result untouchable.
        let malformed =
            |item: &Map<String, Value>| !matches!(field(item, "text"), Some(Value::String(_)));
        if content.iter().filter_map(text_item_object).any(malformed) {
            return None;
        }
        Some(content.iter_mut().filter_map(|item| match item {
            Value::Object(item) if is_text_type(item) => match field_mut(item, "text") {
                Some(Value::String(text)) => Some(text),
                _ => None,
            },
            _ => None,
        }))
    }

    fn insert_text(&mut self, text: String) {
        if let Some(Value::Array(content)) = field_mut(self, "content") {
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

/// The item as an object, if it is a text item.
fn text_item_object(item: &Value) -> Option<&Map<String, Value>> {
    item.as_object().filter(|item| is_text_type(item))
}

fn is_text_type(item: &Map<String, Value>) -> bool {
    str_field(item, "type") == Some("text")
}
