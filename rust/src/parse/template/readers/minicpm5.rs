//! MiniCPM5's calls, `<function name="NAME"><param name="KEY">VALUE</param></function>`, read
//! as vLLM's `minicpm5` parser reads a closed one:
//!
//! - `Ġ` and `Ċ` are a space and a newline, and `<functionname=` and `<paramname=` get their
//!   space back.
//! - **As XML** where the call is a well-formed document ([`super::xml`]): the name is the
//!   `function` element's `name` (stripped; the root, or its first `function` child), the
//!   parameters its `param` children (or, with none, those of its `arguments` child), each
//!   keyed by its `name` (a parameter without one spoils the call) with its text as written
//!   (entities and CDATA read). **Else by patterns**: the name from `<function name="...">`,
//!   each `<param name="KEY">VALUE</param>` with its key stripped and its value stripped (or,
//!   wrapped whole in `<![CDATA[...]]>`, the inside as written); a `<param` without a name
//!   spoils the call.
//! - Each parameter by the called tool's schema: a key the tool does not declare is dropped,
//!   but `properties` or `arguments` (not declared) hold an object whose declared keys are the
//!   arguments (not an object, or none declared: the call is spoiled); a key given twice spoils
//!   the call. A value whose key the tool declares `"type": "string"` is its text (a wrapped
//!   value that is not a string, its JSON); any other is read as JSON, else as a Python literal,
//!   else its text.
//! - A name the tool list lacks may be one of the parser's aliases for τ-bench's telecom tools
//!   (`get_details_by_phone` for `get_customer_by_phone`, ...), with its arguments mapped.
//! - The call stands where its name is a declared tool and every key the tool requires is
//!   given; otherwise it is text.

use serde_json::{Map, Value};

use super::xml;
use crate::parse::template::pythonic;
use crate::parse::template::typed::{self, Val};

/// A declared tool: its name, property schemas and required keys.
struct Tool {
    name: String,
    props: Map<String, Value>,
    required: Vec<String>,
}

fn tools(request: &str) -> Vec<Tool> {
    #[derive(serde::Deserialize)]
    struct Only {
        #[serde(default)]
        tools: Option<Vec<Value>>,
    }
    let Some(list) = serde_json::from_str::<Only>(request)
        .ok()
        .and_then(|o| o.tools)
    else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|t| {
            let f = t.get("function").unwrap_or(t);
            let name = f
                .get("name")?
                .as_str()
                .filter(|n| !n.is_empty())?
                .to_owned();
            let params = f.get("parameters");
            let props = params
                .and_then(|p| p.get("properties"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let required = params
                .and_then(|p| p.get("required"))
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            Some(Tool {
                name,
                props,
                required,
            })
        })
        .collect()
}

/// JSON, else a Python literal, else `None`.
fn parse_value(text: &str) -> Option<Val> {
    typed::loads(text).or_else(|| pythonic::literal(text))
}

/// The parameters read so far, and the keys given.
#[derive(Default)]
struct Args {
    pairs: Vec<(String, Val)>,
    seen: Vec<String>,
}

impl Args {
    /// Adds one parameter by the tool's schema; `false` where it spoils the call.
    fn add(&mut self, tool: Option<&Tool>, key: &str, text: &str) -> bool {
        let props = tool.map(|t| &t.props).filter(|p| !p.is_empty());
        let declared = |k: &str| props.is_some_and(|p| p.contains_key(k));
        if matches!(key, "properties" | "arguments") && props.is_some() && !declared(key) {
            let Some(Val::Dict(inner)) = parse_value(text) else {
                return false;
            };
            let mut added = false;
            for (k, v) in inner {
                if !declared(&k) {
                    continue;
                }
                if self.seen.contains(&k) {
                    return false;
                }
                self.seen.push(k.clone());
                let v = coerce(tool, &k, Given::Value(v));
                typed::put(&mut self.pairs, k, v);
                added = true;
            }
            return added;
        }
        if props.is_some() && !declared(key) {
            return true;
        }
        if self.seen.iter().any(|k| k == key) {
            return false;
        }
        self.seen.push(key.to_owned());
        let v = coerce(tool, key, Given::Text(text));
        typed::put(&mut self.pairs, key.to_owned(), v);
        true
    }

    fn get(&self, key: &str) -> Option<&Val> {
        self.pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

enum Given<'t> {
    Text(&'t str),
    Value(Val),
}

/// A value typed by its key's schema in the called tool.
fn coerce(tool: Option<&Tool>, key: &str, given: Given<'_>) -> Val {
    let string = tool
        .and_then(|t| t.props.get(key))
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str)
        == Some("string");
    match (given, string) {
        (Given::Text(t), true) => Val::Str(t.to_owned()),
        (Given::Value(Val::Str(s)), true) => Val::Str(s),
        (Given::Value(v), true) => {
            let mut s = String::new();
            typed::dump(&v, &mut s);
            Val::Str(s)
        }
        (Given::Text(t), false) => parse_value(t).unwrap_or_else(|| Val::Str(t.to_owned())),
        (Given::Value(Val::Str(s)), false) => parse_value(&s).unwrap_or(Val::Str(s)),
        (Given::Value(v), false) => v,
    }
}

/// The text with the decoder's byte-level marks and collapsed tags read back.
fn normalized(text: &str) -> String {
    if !text.contains(['\u{120}', '\u{10a}'])
        && !text.contains("<functionname=")
        && !text.contains("<paramname=")
    {
        return text.to_owned();
    }
    text.replace('\u{120}', " ")
        .replace('\u{10a}', "\n")
        .replace("<functionname=", "<function name=")
        .replace("<paramname=", "<param name=")
}

/// A quoted attribute value after `name=` at the start of `s` (opened by either quote, up to
/// the next quote of either kind, not empty): the value and the rest.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let body = s.strip_prefix(['"', '\''])?;
    let end = body.find(['"', '\''])?;
    (end > 0).then(|| {
        (
            body.get(..end).unwrap_or_default(),
            body.get(end + 1..).unwrap_or_default(),
        )
    })
}

/// The name of `<function\s+name="...">` (the first such tag).
fn pattern_name(text: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = text.get(from..)?.find("<function") {
        let at = from + i + "<function".len();
        let rest = text.get(at..)?;
        let spaced = rest.trim_start_matches(char::is_whitespace);
        if spaced.len() < rest.len()
            && let Some(after) = spaced.strip_prefix("name=")
            && let Some((name, tail)) = quoted(after)
            && tail.contains('>')
        {
            return Some(name.trim().to_owned());
        }
        from = at;
    }
    None
}

/// Whether a `<param` tag without a `name=` is in the text.
fn param_without_name(text: &str) -> bool {
    let mut rest = text;
    while let Some(i) = rest.find("<param") {
        let tag = rest.get(i + "<param".len()..).unwrap_or_default();
        let end = tag.find('>');
        let attrs = end.and_then(|e| tag.get(..e)).unwrap_or(tag);
        let named = attrs.char_indices().any(|(j, _)| {
            attrs.get(j..).is_some_and(|a| a.starts_with("name=")) && word_edge(attrs, j)
        });
        if end.is_some() && !named {
            return true;
        }
        rest = tag;
    }
    false
}

/// Whether `at` in the text after `<param` begins a word (the tag's `m` is before its start).
fn word_edge(s: &str, at: usize) -> bool {
    s.get(..at)
        .and_then(|b| b.chars().next_back())
        .is_some_and(|c| !(c.is_alphanumeric() || c == '_'))
}

/// Each `<param\s+name="KEY">VALUE</param>`: the key and the value's text.
fn pattern_params(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("<param") {
        let after = rest.get(i + "<param".len()..).unwrap_or_default();
        rest = after;
        let spaced = after.trim_start_matches(char::is_whitespace);
        if spaced.len() == after.len() {
            continue;
        }
        let Some((key, tail)) = spaced.strip_prefix("name=").and_then(quoted) else {
            continue;
        };
        let Some(value) = tail.strip_prefix('>') else {
            continue;
        };
        let Some(end) = value.find("</param>") else {
            continue;
        };
        out.push((key, value.get(..end).unwrap_or_default()));
        rest = value.get(end + "</param>".len()..).unwrap_or_default();
    }
    out
}

/// The call a closed `<function ...>...</function>` is, if it is one: its name and arguments.
pub(crate) fn call(text: &str, request: &str) -> Option<(String, String)> {
    let text = normalized(text);
    let tools = tools(request);
    let tool = |name: &str| tools.iter().find(|t| t.name == name);
    let mut args = Args::default();
    let mut name = None::<String>;
    let mut spoiled = false;
    let mut parsed = false;
    if let Some(root) = xml::parse(&text) {
        let function = match root.name.as_str() {
            "function" => Some(&root),
            _ => root.child("function"),
        };
        if let Some(f) = function {
            let n = f.attr("name").unwrap_or_default().trim().to_owned();
            let mut params: Vec<&xml::Element> =
                f.children.iter().filter(|c| c.name == "param").collect();
            if params.is_empty()
                && let Some(a) = f.child("arguments")
            {
                params = a.children.iter().filter(|c| c.name == "param").collect();
            }
            let t = tool(&n);
            for p in params {
                let key = p.attr("name").unwrap_or_default();
                if key.is_empty() || !args.add(t, key, &p.text) {
                    spoiled = true;
                    break;
                }
            }
            if spoiled {
                args = Args::default();
            }
            parsed = !n.is_empty();
            name = Some(n);
        }
    }
    if !parsed {
        if let Some(n) = pattern_name(&text) {
            name = Some(n);
        }
        let n = name.clone().unwrap_or_default();
        let t = tool(&n);
        let mut bad = param_without_name(&text);
        args.seen.clear();
        for (key, value) in pattern_params(&text) {
            let value = match value
                .strip_prefix("<![CDATA[")
                .and_then(|v| v.strip_suffix("]]>"))
            {
                Some(inner) => inner,
                None => value.trim(),
            };
            if !args.add(t, key.trim(), value) {
                bad = true;
                break;
            }
        }
        if bad {
            args.pairs.clear();
            spoiled = true;
        }
        parsed = !n.is_empty();
    }
    let name = name.filter(|n| !n.is_empty())?;
    if spoiled || !parsed {
        return None;
    }
    let (name, pairs) = aliased(name, args, &tools);
    let t = tool(&name)?;
    if !t.required.iter().all(|k| pairs.iter().any(|(p, _)| p == k)) {
        return None;
    }
    Some((name, typed::dump_args(&pairs)))
}

/// Python's truth of a value (an empty or zero value counts as missing).
fn truthy(v: &Val) -> bool {
    match v {
        Val::Null => false,
        Val::Bool(b) => *b,
        Val::Int(d) => d.trim_start_matches('-') != "0",
        Val::Float(x) => *x != 0.0,
        Val::Str(s) => !s.is_empty(),
        Val::List(l) => !l.is_empty(),
        Val::Dict(d) => !d.is_empty(),
    }
}

/// The parser's aliases for τ-bench's telecom tools, where the called name is not declared and
/// the alias's target is: the target's name and the arguments mapped to it.
fn aliased(name: String, args: Args, tools: &[Tool]) -> (String, Vec<(String, Val)>) {
    let declared = |n: &str| tools.iter().any(|t| t.name == n);
    if declared(&name) {
        return (name, args.pairs);
    }
    // The first of these keys whose value is true by Python's truth (`a or b`).
    let first = |keys: &[&str]| -> Option<Val> {
        let mut last = None;
        for k in keys {
            if let Some(v) = args.get(k) {
                if truthy(v) {
                    return Some(v.clone());
                }
                last = Some(v.clone());
            }
        }
        // `a or b` is `b` when `a` is false; only a missing last key is None.
        last.filter(|_| keys.last().is_some_and(|k| args.get(k).is_some()))
    };
    let pair = |k: &str, v: Val| (k.to_owned(), v);
    match name.as_str() {
        "get_details_by_phone" if declared("get_customer_by_phone") => {
            if let Some(v) = first(&["phone_number", "phone"]) {
                return (
                    "get_customer_by_phone".to_owned(),
                    vec![pair("phone_number", v)],
                );
            }
        }
        "get_details_by_name" if declared("get_customer_by_name") => {
            let mut mapped = Vec::new();
            if let Some(v) = first(&["full_name", "name"]) {
                mapped.push(pair("full_name", v));
            }
            if let Some(v) = first(&["date_of_birth", "dob"]) {
                mapped.push(pair("date_of_birth", v.clone()));
                mapped.push(pair("dob", v));
            }
            if !mapped.is_empty() {
                return ("get_customer_by_name".to_owned(), mapped);
            }
        }
        "get_line_details" | "get_line_status" | "get_roaming_status"
            if declared("get_details_by_id") =>
        {
            if let Some(v) = first(&["line_id", "id"]) {
                return ("get_details_by_id".to_owned(), vec![pair("id", v)]);
            }
        }
        "get_plan_details" if declared("get_details_by_id") => {
            if let Some(v) = first(&["plan_id", "id"]) {
                return ("get_details_by_id".to_owned(), vec![pair("id", v)]);
            }
        }
        "enable_roaming" | "disable_roaming" if declared("toggle_roaming") => {
            if let Some(v) = first(&["line_id", "id"]) {
                let on = Val::Bool(name == "enable_roaming");
                return (
                    "toggle_roaming".to_owned(),
                    vec![pair("line_id", v), pair("enabled", on)],
                );
            }
        }
        "add_refueled_data" | "add_data_to_line" if declared("refuel_data") => {
            let mut mapped = Vec::new();
            if let Some(v) = args.get("customer_id") {
                mapped.push(pair("customer_id", v.clone()));
            }
            if let Some(v) = first(&["line_id", "id"]) {
                mapped.push(pair("line_id", v));
            }
            if let Some(v) = first(&["amount_gb", "gb", "gb_amount", "amount"]) {
                mapped.push(pair("amount_gb", v));
            }
            if !mapped.is_empty() {
                return ("refuel_data".to_owned(), mapped);
            }
        }
        _ => {}
    }
    (name, args.pairs)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const REQUEST: &str = r#"{"tools": [
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"]}}},
        {"type": "function", "function": {"name": "toggle_roaming", "parameters": {
            "properties": {"line_id": {"type": "string"}, "enabled": {"type": "boolean"}}}}}
    ]}"#;

    fn read(text: &str) -> Option<(String, String)> {
        call(text, REQUEST)
    }

    #[test]
    fn xml_values_as_written_and_typed_by_the_schema() {
        let got = read(
            "<function name=\"get_weather\"><param name=\"city\"> Paris &amp; co </param>\
             <param name=\"days\">3</param><param name=\"x\">dropped</param></function>",
        );
        assert_eq!(
            got.unwrap(),
            (
                "get_weather".into(),
                r#"{"city": " Paris & co ", "days": 3}"#.into()
            )
        );
    }

    #[test]
    fn text_that_is_not_xml_is_read_by_patterns() {
        let got = read(
            "<function name=\"get_weather\"><param name=\"city\"> a < b & c </param></function>",
        );
        assert_eq!(got.unwrap().1, r#"{"city": "a < b & c"}"#);
    }

    #[test]
    fn wrappers_duplicates_required_and_unknown_tools() {
        let wrapped = "<function name=\"get_weather\"><param name=\"arguments\">\
                       {'city': 'Oslo', 'days': '2', 'x': 1}</param></function>";
        assert_eq!(read(wrapped).unwrap().1, r#"{"city": "Oslo", "days": 2}"#);
        let twice = "<function name=\"get_weather\"><param name=\"city\">A</param>\
                     <param name=\"city\">B</param></function>";
        assert_eq!(read(twice), None);
        let missing = "<function name=\"get_weather\"><param name=\"days\">1</param></function>";
        assert_eq!(read(missing), None);
        assert_eq!(read("<function name=\"get_stock\"></function>"), None);
        let unnamed = "<function name=\"get_weather\"><param>Paris</param></function>";
        assert_eq!(read(unnamed), None);
    }

    #[test]
    fn telecom_aliases_map_to_the_declared_tool() {
        let got =
            read("<function name=\"enable_roaming\"><param name=\"id\">L1</param></function>");
        assert_eq!(
            got.unwrap(),
            (
                "toggle_roaming".into(),
                r#"{"line_id": "L1", "enabled": true}"#.into()
            )
        );
    }
}
