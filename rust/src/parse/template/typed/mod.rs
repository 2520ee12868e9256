//! Tool-call arguments typed by the request's tool schema
//! (`tools[].function.parameters.properties`), for calls whose arguments are built when they
//! close (tag-form and dialect calls). Two sets of rules, in our words:
//!
//! - **vLLM's** (a built-in template under a vLLM tool parser's name: `qwen3_coder`, `glm45`):
//!   every value is the tag's text as written, a string. For a key the called tool's properties
//!   declare, the types its schema allows (`type`, a string or a list; the types of `enum`
//!   values; `anyOf`, `oneOf` and `allOf` choices; none: `string`) are tried in the order
//!   null, integer, number, boolean, object, array, string: `null` for `null` in any case, an
//!   integer as Python's `int` reads it, a number as `int` or else `float` reads it (whole
//!   floats become integers, `inf` and `nan` fail), a boolean for `true`/`1`/`false`/`0` in any
//!   case and with spaces, an object or array for any JSON value, a string as written. When no
//!   allowed type takes the text (or only unknown ones are declared), JSON text is its value and
//!   other text stays a string. Keys the schema does not declare, and calls of a tool without
//!   properties, stay strings. A value already JSON (DSML's `string="false"`) is typed inside
//!   by the object's `properties` or the list's `items`, and a JSON null, boolean or number by
//!   the text `json.dumps` writes for it (a number for a `string` key becomes a string).
//! - **transformers'** (`parse_response(..., tools=...)`; every other template): after the
//!   template's value parser, each value that is still a string and whose key the schema
//!   declares is tried against the declared types (`type`, `anyOf`, `oneOf`; `nullable` adds
//!   null) in the order declared: an integer (`int`, or a whole `float`), a number (an integer
//!   when the text has no `.`), a boolean (`true`/`1`/`false`/`0`), null (`null` or `None`), an
//!   object or array (JSON of that kind); otherwise it stays a string.
//!
//! Arguments are written as Python's `json.dumps` writes them (`", "` and `": "`, keys in the
//! order first written, floats as `repr`). JSON integers beyond 64 bits are read as floats
//! (Python keeps them exact).

use std::fmt::Write as _;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Whose rules type the arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Typing {
    Vllm,
    Transformers,
    /// vLLM's older parsers that read each tag's value as JSON, else as its text, and never
    /// look at the schema (`functiongemma`).
    Loads,
    /// vLLM's `hy_v3` parser's rules ([`hy_coerce`]).
    HyV3,
    /// vLLM's `poolside_v1` parser's rules ([`poolside_value`]), applied as each tag is read.
    Poolside,
}

/// A JSON value as Python holds it: objects keep their keys in the order first written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Null,
    Bool(bool),
    /// Decimal digits, with a `-` if negative.
    Int(String),
    Float(f64),
    Str(String),
    List(Vec<Val>),
    Dict(Vec<(String, Val)>),
}

impl<'de> Deserialize<'de> for Val {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Val, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Val;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Val, E> {
                Ok(Val::Null)
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Val, E> {
                Ok(Val::Bool(b))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Val, E> {
                Ok(Val::Int(n.to_string()))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Val, E> {
                Ok(Val::Int(n.to_string()))
            }
            fn visit_f64<E: de::Error>(self, x: f64) -> Result<Val, E> {
                Ok(Val::Float(x))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Val, E> {
                Ok(Val::Str(s.to_owned()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Val, E> {
                Ok(Val::Str(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Val, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = seq.next_element()? {
                    items.push(v);
                }
                Ok(Val::List(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Val, A::Error> {
                let mut pairs = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Val>()? {
                    put(&mut pairs, k, v);
                }
                Ok(Val::Dict(pairs))
            }
        }
        d.deserialize_any(V)
    }
}

/// Sets `key` as a Python dict does: a key already there keeps its place and takes the value.
pub(crate) fn put(pairs: &mut Vec<(String, Val)>, key: String, value: Val) {
    match pairs.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => pairs.push((key, value)),
    }
}

/// Python's `json.loads` of `text` (finite numbers only), if it is JSON.
pub(crate) fn loads(text: &str) -> Option<Val> {
    serde_json::from_str(text).ok()
}

/// Python's `repr` of a float.
fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    // The shortest digits that read back, and the exponent of the first one.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let n = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    if (-4..16).contains(&exp) {
        if exp < 0 {
            let zeros = "0".repeat(usize::try_from(-exp - 1).unwrap_or(0));
            return format!("{sign}0.{zeros}{digits}");
        }
        let int_len = usize::try_from(exp + 1).unwrap_or(0);
        if n <= exp + 1 {
            let zeros = "0".repeat(int_len - digits.len());
            return format!("{sign}{digits}{zeros}.0");
        }
        let (int, frac) = digits.split_at(int_len);
        return format!("{sign}{int}.{frac}");
    }
    let (first, rest) = digits.split_at(1.min(digits.len()));
    let dot = if rest.is_empty() { "" } else { "." };
    let esign = if exp < 0 { '-' } else { '+' };
    format!("{sign}{first}{dot}{rest}e{esign}{:02}", exp.abs())
}

/// Writes `v` as Python's `json.dumps(v, ensure_ascii=False)` does.
pub(crate) fn dump(v: &Val, out: &mut String) {
    match v {
        Val::Null => out.push_str("null"),
        Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Val::Int(digits) => out.push_str(digits),
        Val::Float(x) => out.push_str(&py_float(*x)),
        Val::Str(s) => out.push_str(&Value::String(s.clone()).to_string()),
        Val::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                dump(item, out);
            }
            out.push(']');
        }
        Val::Dict(pairs) => {
            out.push('{');
            for (i, (k, item)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(": ");
                dump(item, out);
            }
            out.push('}');
        }
    }
}

/// Python's `str.isspace`.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's longest `int` text.
const MAX_INT_DIGITS: usize = 4300;

/// The digits of `s` with Python's `_` separators (one, between digits) removed.
fn digits_of(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let between = i > 0
                && b.get(i - 1).is_some_and(u8::is_ascii_digit)
                && b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !between {
                return None;
            }
        } else {
            out.push(char::from(c));
        }
    }
    Some(out)
}

/// Python's `int(s)` (ASCII digits), as JSON digits.
fn py_int(s: &str) -> Option<String> {
    let s = s.trim_matches(py_space);
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, s.get(1..)?),
        Some(b'+') => (false, s.get(1..)?),
        _ => (false, s),
    };
    if body.is_empty() || !body.bytes().all(|c| c.is_ascii_digit() || c == b'_') {
        return None;
    }
    let digits = digits_of(body)?;
    if digits.len() > MAX_INT_DIGITS {
        return None;
    }
    let digits = digits.trim_start_matches('0');
    Some(match (digits.is_empty(), neg) {
        (true, _) => "0".to_owned(),
        (false, true) => format!("-{digits}"),
        (false, false) => digits.to_owned(),
    })
}

/// Python's `float(s)`.
fn py_float_of(s: &str) -> Option<f64> {
    let s = s.trim_matches(py_space);
    let plain = if s.contains('_') {
        digits_of(s)?
    } else {
        s.to_owned()
    };
    plain.parse::<f64>().ok()
}

/// A whole float as Python's `int` of it.
fn whole_float(x: f64) -> String {
    if x == 0.0 {
        "0".to_owned()
    } else {
        format!("{x:.0}")
    }
}

/// The types a property's schema allows, as vLLM reads them (none: `string`).
fn vllm_types(schema: &Value, out: &mut Vec<String>) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    match obj.get("type") {
        Some(Value::String(t)) => out.push(t.clone()),
        Some(Value::Array(ts)) => {
            out.extend(ts.iter().filter_map(Value::as_str).map(str::to_owned))
        }
        _ => {}
    }
    if let Some(Value::Array(values)) = obj.get("enum") {
        for v in values {
            let t = match v {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Number(n) if n.is_f64() => "number",
                Value::Number(_) => "integer",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
            };
            out.push(t.to_owned());
        }
    }
    for union in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(choices)) = obj.get(union) {
            for c in choices {
                vllm_types(c, out);
            }
        }
    }
}

/// vLLM's names for JSON Schema types.
fn vllm_alias(t: &str) -> String {
    let t = t.trim_matches(py_space).to_lowercase();
    let canonical = match t.as_str() {
        "str" | "text" | "varchar" | "char" | "enum" => "string",
        "int" | "int32" | "int64" | "uint" | "uint32" | "uint64" | "long" | "short"
        | "unsigned" => "integer",
        "float" | "float32" | "float64" | "double" => "number",
        "bool" => "boolean",
        "dict" => "object",
        "arr" | "list" | "sequence" => "array",
        _ => return t,
    };
    canonical.to_owned()
}

/// Whether `typing` types each argument alone, from its own text and schema, so that a
/// tag-form call's arguments can be sent tag by tag.
pub(crate) fn types_each(typing: Typing) -> bool {
    matches!(typing, Typing::Vllm | Typing::HyV3)
}

/// Whether `typing` keeps any text of a property with this schema as that text, a string.
pub(crate) fn keeps_text(typing: Typing, schema: &Value) -> bool {
    match typing {
        Typing::Vllm => vllm_keeps_text(schema),
        Typing::HyV3 => {
            let types = hy_types(schema);
            !types.is_empty() && types.iter().all(|t| t == "string")
        }
        _ => false,
    }
}

/// Whether vLLM's rules keep any text of a property with this schema as that text, a string
/// (the schema declares no type, or `string` and none that is tried first).
fn vllm_keeps_text(schema: &Value) -> bool {
    let mut declared = Vec::new();
    vllm_types(schema, &mut declared);
    let types: Vec<String> = declared.iter().map(|t| vllm_alias(t)).collect();
    types.is_empty()
        || (types.iter().any(|t| t == "string")
            && !types.iter().any(|t| {
                matches!(
                    t.as_str(),
                    "null" | "integer" | "number" | "boolean" | "object" | "array"
                )
            }))
}

/// A tag's text typed by its property's schema, by vLLM's rules.
fn vllm_coerce(text: &str, schema: &Value) -> Val {
    let mut declared = Vec::new();
    vllm_types(schema, &mut declared);
    if declared.is_empty() {
        return Val::Str(text.to_owned());
    }
    let types: Vec<String> = declared.iter().map(|t| vllm_alias(t)).collect();
    let has = |t: &str| types.iter().any(|x| x == t);
    for t in [
        "null", "integer", "number", "boolean", "object", "array", "string",
    ] {
        if !has(t) {
            continue;
        }
        let v = match t {
            "null" => (text.to_lowercase() == "null").then_some(Val::Null),
            "integer" => py_int(text).map(Val::Int),
            "number" => py_int(text).map(Val::Int).or_else(|| {
                py_float_of(text)
                    .filter(|x| x.is_finite())
                    .map(|x| match x.fract() == 0.0 {
                        true => Val::Int(whole_float(x)),
                        false => Val::Float(x),
                    })
            }),
            "boolean" => match text.to_lowercase().trim_matches(py_space) {
                "true" | "1" => Some(Val::Bool(true)),
                "false" | "0" => Some(Val::Bool(false)),
                _ => None,
            },
            "object" | "array" => loads(text),
            _ => Some(Val::Str(text.to_owned())),
        };
        if let Some(v) = v {
            return v;
        }
    }
    loads(text).unwrap_or_else(|| Val::Str(text.to_owned()))
}

/// The types a property's schema allows, as vLLM's `hy_v3` parser reads them: its `type` (a
/// list of them), else each of its `anyOf` (or `oneOf`) choices' (absent: `string`), else
/// `string`; each by Hunyuan's names, `null` left out.
fn hy_types(schema: &Value) -> Vec<String> {
    let of = |choice: &Value| match choice.get("type") {
        Some(Value::String(t)) => hy_alias(t),
        Some(other) => other.to_string(),
        None => "string".to_owned(),
    };
    let types: Vec<String> = match schema.get("type") {
        Some(Value::Array(ts)) => ts
            .iter()
            .map(|t| t.as_str().map_or_else(|| t.to_string(), hy_alias))
            .collect(),
        Some(_) => vec![of(schema)],
        None => match schema.get("anyOf").or_else(|| schema.get("oneOf")) {
            Some(Value::Array(choices)) => choices.iter().map(of).collect(),
            _ => vec!["string".to_owned()],
        },
    };
    types.into_iter().filter(|t| t != "null").collect()
}

/// Hunyuan's names for JSON Schema types: an exact alias, else by prefix (`int`, `uint`,
/// `long`, `short`, `unsigned`: `integer`; `num`, `float`: `number`), else as written.
fn hy_alias(t: &str) -> String {
    let exact = match t {
        "str" | "text" | "varchar" | "char" | "enum" => Some("string"),
        "bool" | "binary" => Some("boolean"),
        "int" => Some("integer"),
        "float" | "double" => Some("number"),
        "list" => Some("array"),
        "dict" | "map" => Some("object"),
        _ => None,
    };
    let lower = t.to_lowercase();
    let by_prefix = |prefixes: &[&str]| prefixes.iter().any(|p| lower.starts_with(p));
    match exact {
        Some(e) => e.to_owned(),
        None if by_prefix(&["int", "uint", "long", "short", "unsigned"]) => "integer".to_owned(),
        None if by_prefix(&["num", "float"]) => "number".to_owned(),
        None => t.to_owned(),
    }
}

/// A tag's text typed by its property's schema, by vLLM's `hy_v3` rules: a boolean (`true` or
/// `false`, any case), an integer (Python's `int`), a number (a float where the text has `.`,
/// `e` or `E`, else an integer), JSON for any other declared type, in that order as the schema
/// allows; then the text where `string` is allowed; else JSON, a Python literal, or the text.
fn hy_coerce(text: &str, schema: &Value) -> Val {
    let types = hy_types(schema);
    let has = |t: &str| types.iter().any(|x| x == t);
    if has("boolean") {
        match text.to_lowercase().as_str() {
            "true" => return Val::Bool(true),
            "false" => return Val::Bool(false),
            _ => {}
        }
    }
    if has("integer")
        && let Some(i) = py_int(text)
    {
        return Val::Int(i);
    }
    if has("number") {
        let n = match text.contains(['.', 'e', 'E']) {
            true => py_float_of(text).map(Val::Float),
            false => py_int(text).map(Val::Int),
        };
        if let Some(n) = n {
            return n;
        }
    }
    let scalar = ["string", "boolean", "integer", "number"];
    if types.iter().any(|t| !scalar.contains(&t.as_str()))
        && let Some(v) = loads(text)
    {
        return v;
    }
    if has("string") {
        return Val::Str(text.to_owned());
    }
    loads(text)
        .or_else(|| super::pythonic::literal(text))
        .unwrap_or_else(|| Val::Str(text.to_owned()))
}

/// A tag's value as vLLM's `poolside_v1` parser reads it: as written where its property's
/// schema says `"type": "string"`, else stripped and read as JSON, a Python literal, or its
/// text (a key without a schema too).
pub(crate) fn poolside_value(text: &str, schema: Option<&Value>) -> Val {
    if schema.and_then(|s| s.get("type")).and_then(Value::as_str) == Some("string") {
        return Val::Str(text.to_owned());
    }
    let text = text.trim_matches(py_space);
    loads(text)
        .or_else(|| super::pythonic::literal(text))
        .unwrap_or_else(|| Val::Str(text.to_owned()))
}

/// The types a property's schema declares, as transformers reads them.
fn transformers_types(schema: &Value, out: &mut Vec<String>) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    match obj.get("type") {
        Some(Value::String(t)) => out.push(t.clone()),
        Some(Value::Array(ts)) => {
            out.extend(ts.iter().filter_map(Value::as_str).map(str::to_owned))
        }
        _ => {}
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(choices)) = obj.get(union) {
            for c in choices {
                transformers_types(c, out);
            }
        }
    }
    let nullable = obj.get("nullable").is_some_and(|n| match n {
        Value::Bool(b) => *b,
        Value::Null => false,
        _ => true,
    });
    if nullable && !out.iter().any(|t| t == "null") {
        out.push("null".to_owned());
    }
}

/// A string value typed by its property's schema, by transformers' rules.
fn transformers_coerce(raw: &str, schema: &Value) -> Option<Val> {
    let mut types = Vec::new();
    transformers_types(schema, &mut types);
    for t in &types {
        let v = match t.as_str() {
            "integer" => py_int(raw).map(Val::Int).or_else(|| {
                py_float_of(raw)
                    .filter(|x| x.is_finite() && x.fract() == 0.0)
                    .map(|x| Val::Int(whole_float(x)))
            }),
            "number" => py_float_of(raw).filter(|x| x.is_finite()).map(|x| {
                if x.fract() == 0.0 && !raw.contains('.') {
                    Val::Int(whole_float(x))
                } else {
                    Val::Float(x)
                }
            }),
            "boolean" => match raw.trim_matches(py_space).to_lowercase().as_str() {
                "true" | "1" => Some(Val::Bool(true)),
                "false" | "0" => Some(Val::Bool(false)),
                _ => None,
            },
            "null" => matches!(raw.trim_matches(py_space), "null" | "None").then_some(Val::Null),
            "object" => loads(raw).filter(|v| matches!(v, Val::Dict(_))),
            "array" => loads(raw).filter(|v| matches!(v, Val::List(_))),
            _ => None,
        };
        if v.is_some() {
            return v;
        }
    }
    None
}

/// The properties of the tool named `name` in the chat request's JSON text (the first tool of
/// that name), if it declares any.
pub(crate) fn properties(request: &str, name: &str) -> Option<serde_json::Map<String, Value>> {
    #[derive(serde::Deserialize)]
    struct Only {
        #[serde(default)]
        tools: Option<Vec<Value>>,
    }
    let only: Only = serde_json::from_str(request).ok()?;
    let tool = only.tools?.into_iter().find(|t| {
        let f = t.get("function").unwrap_or(t);
        f.get("name").and_then(Value::as_str) == Some(name)
    })?;
    let f = tool.get("function").unwrap_or(&tool);
    match f.get("parameters")?.get("properties")? {
        Value::Object(p) if !p.is_empty() => Some(p.clone()),
        _ => None,
    }
}

/// Types the arguments in place, by `typing`'s rules; returns whether any value changed.
/// `text` with the entities an XML-style attribute escapes read back: `&quot;` as `"`, then
/// `&amp;` as `&` (the reverse of escaping `&` first).
pub(crate) fn unescape_entities(text: &str) -> String {
    text.replace("&quot;", "\"").replace("&amp;", "&")
}

pub(crate) fn type_args(
    typing: Typing,
    args: &mut [(String, Val)],
    props: &serde_json::Map<String, Value>,
) -> bool {
    let mut changed = false;
    for (key, value) in args.iter_mut() {
        let Some(schema) = props.get(key) else {
            continue;
        };
        if typing == Typing::Vllm && !matches!(value, Val::Str(_)) {
            changed |= vllm_nested(value, schema);
            continue;
        }
        let Val::Str(text) = &*value else {
            continue;
        };
        let typed = match typing {
            Typing::Vllm => Some(vllm_coerce(text, schema)),
            Typing::HyV3 => Some(hy_coerce(text, schema)),
            Typing::Poolside => None,
            Typing::Transformers => transformers_coerce(text, schema),
            Typing::Loads => None,
        };
        if let Some(v) = typed.filter(|v| v != value) {
            *value = v;
            changed = true;
        }
    }
    changed
}

/// vLLM's engine parsers type values inside an object or a list too, where the schema gives
/// the object's `properties` or the list's `items`: strings as at the top, objects and lists
/// again; and a JSON null, boolean or number (DSML's `string="false"` values) as the text
/// `json.dumps` writes for it, kept where that gives the same value. Returns whether a value
/// changed.
fn vllm_nested(value: &mut Val, schema: &Value) -> bool {
    match value {
        Val::Null | Val::Bool(_) | Val::Int(_) | Val::Float(_) => {
            let mut text = String::new();
            dump(value, &mut text);
            let typed = vllm_coerce(&text, schema);
            let changed = typed != *value;
            if changed {
                *value = typed;
            }
            changed
        }
        Val::Dict(pairs) => match schema.get("properties").and_then(Value::as_object) {
            Some(props) => type_args(Typing::Vllm, pairs, props),
            None => false,
        },
        Val::List(items) => {
            let Some(each) = schema.get("items").filter(|i| i.is_object()) else {
                return false;
            };
            let mut changed = false;
            for item in items.iter_mut() {
                match item {
                    Val::Str(text) => {
                        let typed = vllm_coerce(text, each);
                        if typed != *item {
                            *item = typed;
                            changed = true;
                        }
                    }
                    _ => changed |= vllm_nested(item, each),
                }
            }
            changed
        }
        _ => false,
    }
}

/// Arguments that are one key of `wrappers` alone, which `props` does not declare, holding an
/// object (or its JSON text) whose keys `props` all declares, as that object (vLLM's DSML
/// parsers unwrap `{"arguments": {...}}` and `{"input": {...}}`); others as they are.
pub(crate) fn unwrap_args(
    args: Vec<(String, Val)>,
    wrappers: &[String],
    props: &serde_json::Map<String, Value>,
) -> Vec<(String, Val)> {
    let [(key, inner)] = args.as_slice() else {
        return args;
    };
    if !wrappers.contains(key) || props.contains_key(key) {
        return args;
    }
    let inner = match inner {
        Val::Str(text) => match loads(text) {
            Some(v) => v,
            None => return args,
        },
        v => v.clone(),
    };
    match inner {
        Val::Dict(pairs) if pairs.iter().all(|(k, _)| props.contains_key(k)) => pairs,
        _ => args,
    }
}

/// The arguments as a JSON object, written as Python writes it.
pub(crate) fn dump_args(args: &[(String, Val)]) -> String {
    let mut s = String::with_capacity(16 * args.len() + 2);
    s.push('{');
    for (i, (k, v)) in args.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{}: ", Value::String(k.clone()));
        dump(v, &mut s);
    }
    s.push('}');
    s
}

#[cfg(test)]
mod tests;
