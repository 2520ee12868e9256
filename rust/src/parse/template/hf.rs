//! The checkpoint's template under vLLM's names `hf` and `beam`: what vLLM's response-template
//! parser accepts at startup, and the implicit `content` it adds. How its text and calls are
//! read is the executor's, under [`super::exec::Knobs::hf`].

use serde_json::{Map, Value};

/// The fields vLLM's `hf` parser routes.
const FIELDS: [&str; 3] = ["thinking", "content", "tool_calls"];
/// The content parsers it knows.
const PARSERS: [&str; 7] = [
    "text",
    "int",
    "float",
    "bool",
    "json",
    "xml-inline",
    "kv-lines",
];

/// The template's JSON as vLLM's `hf` parser serves it, or why vLLM refuses it at startup:
/// only `thinking`, `content` and `tool_calls` fields (the first two plain text, without a
/// transform or a join), `defaults` of `role` only, known content parsers, a `thinking` field
/// where the reasoning parser is named and a `tool_calls` field where the tool parser is. A
/// template without `content` whose every field has an open delimiter gets an empty one (the
/// text outside every region).
pub(crate) fn served(
    json: &str,
    name: &str,
    reasoning: bool,
    tool: bool,
) -> Result<String, String> {
    let refuse = |why: String| {
        format!(
            "the parser {name:?} (vLLM's) serves the checkpoint's response_template as vLLM \
             does, and vLLM refuses this one: {why}; name the parser \"auto\" to read it by \
             transformers' rules"
        )
    };
    let mut t: Value = serde_json::from_str(json).map_err(|e| refuse(format!("not JSON ({e})")))?;
    let root = t
        .as_object_mut()
        .ok_or_else(|| refuse("not an object".to_owned()))?;
    if let Some(other) = root
        .get("defaults")
        .and_then(Value::as_object)
        .and_then(|d| d.keys().find(|k| *k != "role"))
    {
        return Err(refuse(format!(
            "a default {other:?} (only \"role\" is served)"
        )));
    }
    let fields = root
        .get_mut("fields")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| refuse("no fields".to_owned()))?;
    for (field, spec) in fields.iter() {
        if !FIELDS.contains(&field.as_str()) {
            return Err(refuse(format!(
                "a field {field:?} (the fields served are \"thinking\", \"content\" and \
                 \"tool_calls\")"
            )));
        }
        let parser = spec
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or("text");
        if !PARSERS.contains(&parser) {
            return Err(refuse(format!(
                "the content parser {parser:?} of {field:?}"
            )));
        }
        let text_only = field != "tool_calls";
        if text_only
            && (parser != "text" || spec.get("transform").is_some() || spec.get("join").is_some())
        {
            return Err(refuse(format!(
                "the field {field:?} is not plain text (a content parser, a transform or a join)"
            )));
        }
    }
    for (named, field, flag) in [
        (reasoning, "thinking", "reasoning"),
        (tool, "tool_calls", "tool-call"),
    ] {
        if named && !fields.contains_key(field) {
            return Err(refuse(format!(
                "the {flag} parser is named and there is no {field:?} field"
            )));
        }
    }
    let all_opened = fields
        .values()
        .all(|f| f.get("open").is_some() || f.get("open_pattern").is_some());
    if !fields.contains_key("content") && all_opened {
        fields.insert("content".to_owned(), Value::Object(Map::new()));
    }
    Ok(t.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn what_vllm_serves_and_refuses() {
        let ok =
            r#"{"start_anchor": "A", "fields": {"thinking": {"open": "<t>", "close": "</t>"}}}"#;
        let served_json: Value =
            serde_json::from_str(&served(ok, "hf", true, false).unwrap()).unwrap();
        assert!(served_json["fields"]["content"].is_object());
        assert!(
            served(ok, "hf", false, true)
                .unwrap_err()
                .contains("no \"tool_calls\" field")
        );
        let other = r#"{"start_anchor": "A", "fields": {"reasoning_content": {"open": "<t>"}}}"#;
        assert!(
            served(other, "beam", false, false)
                .unwrap_err()
                .contains("\"reasoning_content\"")
        );
        let joined =
            r#"{"start_anchor": "A", "fields": {"content": {"repeats": true, "join": "\n"}}}"#;
        assert!(
            served(joined, "hf", false, false)
                .unwrap_err()
                .contains("not plain text")
        );
        let parser = r#"{"start_anchor": "A", "fields": {"tool_calls": {"open": "[", "content": "pythonic"}}}"#;
        assert!(
            served(parser, "hf", false, true)
                .unwrap_err()
                .contains("\"pythonic\"")
        );
    }
}
