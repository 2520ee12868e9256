//! K2 Horizon's call block, `<ifm|tool_calls>` … `</ifm|tool_calls>`, read as vLLM's
//! `k2_horizon` parser reads it: all of its calls, or none (the block is then text).
//!
//! - The block holds nothing but `<ifm|tool_call>BODY</ifm|tool_call>` calls and whitespace.
//! - A body is written in the request's `chat_template_kwargs.tool_call_format`: `xml` (the
//!   default): the name, then `<ifm|arg_key>K</ifm|arg_key><ifm|arg_value>V</ifm|arg_value>`
//!   pairs and whitespace only; `xml_typed`: each pair with `<ifm|arg_type>T</ifm|arg_type>`
//!   between key and value (a pair without it spoils the call, as a type in `xml` does); `json`:
//!   `{"name": N, "arguments": {...}}`.
//! - A name has no whitespace and, where the request has tools, is one of them, and, where
//!   `tool_choice` names a function, is that one. A key is not empty and not given twice.
//! - Values are typed by the tool's schema as vLLM types a tag's text ([`typed::vllm_coerce`]):
//!   an `xml` value stripped unless the schema names `string`; an `xml_typed` value by the type
//!   tag (its base, `array` for `array[string]`) where the schema allows it among others, or
//!   where there is no schema (`any`: the text as written); a `json` value from its text (a
//!   string) or its JSON.

use std::sync::LazyLock;

use serde_json::{Map, Value};

use crate::parse::template::typed::{self, Val};

/// The formats a body may be written in, from `chat_template_kwargs.tool_call_format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Xml,
    XmlTyped,
    Json,
}

/// The request's call format, or the error vLLM answers for one it does not support.
pub(crate) fn format(request: &str) -> Result<Format, String> {
    let given = serde_json::from_str::<Value>(request).ok().and_then(|r| {
        r.get("chat_template_kwargs")?
            .get("tool_call_format")
            .cloned()
    });
    match given.as_ref().map(|v| v.as_str()) {
        None => Ok(Format::Xml),
        Some(Some("xml")) => Ok(Format::Xml),
        Some(Some("xml_typed")) => Ok(Format::XmlTyped),
        Some(Some("json")) => Ok(Format::Json),
        _ => Err(format!(
            "Unsupported tool_call_format {}. Supported values: json, xml, xml_typed.",
            py_repr(given.as_ref())
        )),
    }
}

/// K2 Horizon's reasoning efforts, each with its think markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effort {
    High,
    Medium,
    Low,
}

impl Effort {
    /// The open and close think markers of this effort.
    pub(crate) fn markers(self) -> (&'static str, &'static str) {
        match self {
            Effort::High => ("<ifm|think>", "</ifm|think>"),
            Effort::Medium => ("<ifm|think_fast>", "</ifm|think_fast>"),
            Effort::Low => ("<ifm|think_faster>", "</ifm|think_faster>"),
        }
    }
}

/// The request's reasoning effort as vLLM's `k2_horizon` parser reads it: the request's
/// `reasoning_effort` (unless null or `"auto"`), else `chat_template_kwargs.reasoning_effort`,
/// else `"high"`; or the error vLLM answers for one it does not support.
pub(crate) fn effort(request: &str) -> Result<Effort, String> {
    let r: Value = serde_json::from_str(request).unwrap_or_default();
    let top = r
        .get("reasoning_effort")
        .filter(|v| !v.is_null() && v.as_str() != Some("auto"));
    let given = top.or_else(|| r.get("chat_template_kwargs")?.get("reasoning_effort"));
    match given.map(|v| v.as_str()) {
        None | Some(Some("high")) => Ok(Effort::High),
        Some(Some("medium")) => Ok(Effort::Medium),
        Some(Some("low")) => Ok(Effort::Low),
        _ => Err(format!(
            "Unsupported reasoning_effort {}. Supported values: high, medium, low.",
            py_repr(given)
        )),
    }
}

/// A JSON value as Python's `repr` writes it, for an error message.
pub(crate) fn py_repr(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "None".to_owned(),
        Some(Value::String(s)) => format!("'{s}'"),
        Some(Value::Bool(b)) => if *b { "True" } else { "False" }.to_owned(),
        Some(other) => other.to_string(),
    }
}

const CALLS: (&str, &str) = ("<ifm|tool_calls>", "</ifm|tool_calls>");
const CALL: (&str, &str) = ("<ifm|tool_call>", "</ifm|tool_call>");
const KEY: &str = "<ifm|arg_key>";
const MARKERS: [&str; 6] = [
    "<ifm|arg_key>",
    "</ifm|arg_key>",
    "<ifm|arg_type>",
    "</ifm|arg_type>",
    "<ifm|arg_value>",
    "</ifm|arg_value>",
];

static PAIR: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::RegexBuilder::new(
        r"<ifm\|arg_key>(.*?)</ifm\|arg_key>\s*(?:<ifm\|arg_type>(.*?)</ifm\|arg_type>\s*)?<ifm\|arg_value>(.*?)</ifm\|arg_value>",
    )
    .dot_matches_new_line(true)
    .build()
    .ok()
});

/// What the request says of the tools.
struct Tools {
    list: Option<Vec<Value>>,
    named: Option<String>,
}

impl Tools {
    fn of(request: &str) -> Tools {
        let r: Value = serde_json::from_str(request).unwrap_or_default();
        let list = r.get("tools").and_then(Value::as_array).cloned();
        let named = r
            .get("tool_choice")
            .and_then(|c| c.get("function"))
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        Tools { list, named }
    }

    fn function(&self, name: &str) -> Option<&Value> {
        self.list.as_ref()?.iter().find_map(|t| {
            let f = t.get("function").unwrap_or(t);
            (f.get("name").and_then(Value::as_str) == Some(name)).then_some(f)
        })
    }

    fn properties(&self, name: &str) -> Map<String, Value> {
        self.function(name)
            .and_then(|f| f.get("parameters")?.get("properties")?.as_object().cloned())
            .unwrap_or_default()
    }

    /// The name, if a call may have it.
    fn check(&self, name: &str) -> Option<String> {
        if name.is_empty() || name.chars().any(char::is_whitespace) {
            return None;
        }
        if self.list.as_ref().is_some_and(|l| !l.is_empty()) && self.function(name).is_none() {
            return None;
        }
        if self.named.as_deref().is_some_and(|n| n != name) {
            return None;
        }
        Some(name.to_owned())
    }
}

/// `text` typed as one of `types` (JSON Schema type names), by vLLM's rules.
fn coerce(text: &str, types: &[String]) -> Val {
    let schema = serde_json::json!({ "type": types });
    typed::vllm_coerce(text, &schema)
}

/// The type names vLLM reads from a property's schema (none: `string`).
fn types_of(schema: Option<&Value>) -> Vec<String> {
    match schema.filter(|s| s.is_object()) {
        None => vec!["string".to_owned()],
        Some(s) => {
            let mut names = typed::vllm_type_names(s);
            names.sort();
            names.dedup();
            if names.is_empty() {
                names.push("string".to_owned());
            }
            names
        }
    }
}

fn xml_value(value: &str, schema: Option<&Value>, tag: Option<&str>) -> Val {
    let base = tag
        .map(|t| {
            t.split('[')
                .next()
                .unwrap_or_default()
                .trim()
                .to_lowercase()
        })
        .filter(|b| !b.is_empty());
    let mut types = types_of(schema);
    match (schema.filter(|s| s.is_object()), base) {
        (Some(_), Some(b)) if types.contains(&b) && types.len() > 1 => types = vec![b],
        (Some(_), _) => {}
        (None, Some(b)) if b == "any" => return Val::Str(value.to_owned()),
        (None, Some(b)) => types = vec![b],
        (None, None) => {}
    }
    let raw = match types.iter().any(|t| t == "string") {
        true => value,
        false => value.trim(),
    };
    coerce(raw, &types)
}

fn xml_call(body: &str, tools: &Tools, format: Format) -> Option<(String, Vec<(String, Val)>)> {
    let Some(first) = body.find(KEY) else {
        if MARKERS.iter().any(|m| body.contains(m)) {
            return None;
        }
        return Some((tools.check(body.trim())?, Vec::new()));
    };
    let name = tools.check(body.get(..first)?.trim())?;
    let props = tools.properties(&name);
    let mut args: Vec<(String, Val)> = Vec::new();
    let mut at = first;
    let pair = PAIR.as_ref()?;
    for caps in pair.captures_iter(body.get(first..)?) {
        let whole = caps.get(0)?;
        let (start, end) = (first + whole.start(), first + whole.end());
        if !body.get(at..start)?.trim().is_empty() {
            return None;
        }
        let key = caps.get(1)?.as_str().trim();
        if key.is_empty() || args.iter().any(|(k, _)| k == key) {
            return None;
        }
        let tag = caps.get(2).map(|t| t.as_str().trim());
        match (format, tag) {
            (Format::Xml, Some(_)) => return None,
            (Format::XmlTyped, None | Some("")) => return None,
            _ => {}
        }
        let value = xml_value(caps.get(3)?.as_str(), props.get(key), tag);
        args.push((key.to_owned(), value));
        at = end;
    }
    if at == first || !body.get(at..)?.trim().is_empty() {
        return None;
    }
    Some((name, args))
}

fn json_call(body: &str, tools: &Tools) -> Option<(String, Vec<(String, Val)>)> {
    let Val::Dict(call) = typed::loads(body.trim())? else {
        return None;
    };
    let get = |k: &str| call.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let Some(Val::Str(name)) = get("name") else {
        return None;
    };
    let name = tools.check(name)?;
    let arguments = match get("arguments") {
        None => Vec::new(),
        Some(Val::Dict(a)) => a.clone(),
        Some(_) => return None,
    };
    let props = tools.properties(&name);
    let typed = arguments
        .into_iter()
        .map(|(k, v)| {
            let v = match props.get(&k).filter(|s| s.is_object()) {
                None => v,
                Some(schema) => {
                    let raw = match v {
                        Val::Str(s) => s,
                        other => {
                            let mut s = String::new();
                            typed::dump(&other, &mut s);
                            s
                        }
                    };
                    coerce(&raw, &types_of(Some(schema)))
                }
            };
            (k, v)
        })
        .collect();
    Some((name, typed))
}

/// The calls of a closed block (its markers included), or `None` where it is text.
pub(crate) fn calls(block: &str, request: &str) -> Option<Vec<(String, String)>> {
    let format = format(request).ok()?;
    let tools = Tools::of(request);
    let body = block.strip_prefix(CALLS.0)?.strip_suffix(CALLS.1)?;
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(open) = rest.find(CALL.0) {
        if !rest.get(..open)?.trim().is_empty() {
            return None;
        }
        let after = rest.get(open + CALL.0.len()..)?;
        // A call without its close: the text left is not only calls.
        let close = after.find(CALL.1)?;
        let call = after.get(..close)?;
        let (name, args) = match format {
            Format::Json => json_call(call, &tools)?,
            _ => xml_call(call, &tools, format)?,
        };
        out.push((name, typed::dump_args(&args)));
        rest = after.get(close + CALL.1.len()..)?;
    }
    (!out.is_empty() && rest.trim().is_empty()).then_some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const TOOLS: &str = r#""tools": [{"type": "function", "function": {"name": "calc",
        "parameters": {"properties": {"i": {"type": "integer"}, "u": {"type": ["string", "null"]},
        "s": {"type": "string"}}}}}, {"type": "function", "function": {"name": "get_time"}}]"#;

    fn block(calls: &[&str]) -> String {
        let calls: String = calls
            .iter()
            .map(|c| format!("{}{c}{}\n", CALL.0, CALL.1))
            .collect();
        format!("{}\n{calls}{}", CALLS.0, CALLS.1)
    }

    fn arg(k: &str, t: Option<&str>, v: &str) -> String {
        let t = t
            .map(|t| format!("<ifm|arg_type>{t}</ifm|arg_type>"))
            .unwrap_or_default();
        format!("<ifm|arg_key>{k}</ifm|arg_key>\n{t}<ifm|arg_value>{v}</ifm|arg_value>\n")
    }

    #[test]
    fn xml_calls_are_typed_by_the_schema() {
        let request = format!("{{{TOOLS}}}");
        let call = format!(
            "calc\n{}{}{}",
            arg("i", None, " 5 "),
            arg("u", None, "null"),
            arg("x", None, " 7 ")
        );
        let got = calls(&block(&[&call, "get_time"]), &request).unwrap();
        assert_eq!(
            got,
            [
                (
                    "calc".to_owned(),
                    r#"{"i": 5, "u": null, "x": " 7 "}"#.to_owned()
                ),
                ("get_time".to_owned(), "{}".to_owned())
            ]
        );
    }

    #[test]
    fn a_block_is_all_calls_or_none() {
        let request = format!("{{{TOOLS}}}");
        // An unknown tool, text between calls, a type tag in plain xml, a key given twice.
        for bad in [
            block(&["get_stock"]),
            format!("{}get_time{}junk", CALLS.0, CALLS.1),
            block(&[
                "get_time",
                &format!("calc\n{}", arg("i", Some("integer"), "1")),
            ]),
            block(&[&format!(
                "calc\n{}{}",
                arg("i", None, "1"),
                arg("i", None, "2")
            )]),
            block(&[]),
        ] {
            assert_eq!(calls(&bad, &request), None, "{bad}");
        }
    }

    #[test]
    fn typed_and_json_formats() {
        let typed = format!(
            "{{{TOOLS}, \"chat_template_kwargs\": {{\"tool_call_format\": \"xml_typed\"}}}}"
        );
        let call = format!(
            "calc\n{}{}{}",
            arg("u", Some("string"), "null"),
            arg("free", Some("any"), " raw "),
            arg("n", Some("number"), "3")
        );
        assert_eq!(
            calls(&block(&[&call]), &typed).unwrap()[0].1,
            r#"{"u": "null", "free": " raw ", "n": 3}"#
        );
        let json =
            format!("{{{TOOLS}, \"chat_template_kwargs\": {{\"tool_call_format\": \"json\"}}}}");
        let call = r#"{"name": "calc", "arguments": {"i": "5", "s": 7, "x": [1]}}"#;
        assert_eq!(
            calls(&block(&[call]), &json).unwrap()[0].1,
            r#"{"i": 5, "s": "7", "x": [1]}"#
        );
        let bad = r#"{"tool_call_format": "yaml"}"#;
        let err = format(&format!("{{\"chat_template_kwargs\": {bad}}}")).unwrap_err();
        assert_eq!(
            err,
            "Unsupported tool_call_format 'yaml'. Supported values: json, xml, xml_typed."
        );
    }
}
