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

pub(crate) use rules::{
    keeps_text, poolside_value, type_args, types_each, vllm_coerce, vllm_names_string,
    vllm_type_names,
};

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
    /// vLLM's `muse` parser's rules, applied as each tag is read: a value whose key the tool
    /// declares with `"type": "string"` is its text, any other is read as JSON, else its text.
    Muse,
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

/// The properties of the tool named `name` in the chat request's JSON text (the first tool of
/// that name), if it declares any; a property given as a local reference (`{"$ref":
/// "#/$defs/Location"}`) is the schema it refers to in the tool's parameters.
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
    let parameters = f.get("parameters")?;
    match parameters.get("properties")? {
        Value::Object(p) if !p.is_empty() => Some(
            p.iter()
                .map(|(k, v)| (k.clone(), resolved(parameters, v).clone()))
                .collect(),
        ),
        _ => None,
    }
}

/// `schema`, or where it is a local reference (`"$ref": "#/..."`), the schema the reference
/// points to in `root` (through at most 8 references; one that points nowhere stays as it is).
fn resolved<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let mut at = schema;
    for _ in 0..8 {
        let Some(target) = at
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|pointer| root.pointer(pointer))
        else {
            break;
        };
        at = target;
    }
    at
}

/// The name `X` for a call's name `X.X` (cut at its first `.`) where the request's tools
/// declare `X` but not `X.X` (vLLM's Muse parsers read a doubled name so); `None` otherwise.
pub(crate) fn collapsed(request: &str, name: &str) -> Option<String> {
    let (head, tail) = name.split_once('.')?;
    if head != tail {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Only {
        #[serde(default)]
        tools: Option<Vec<Value>>,
    }
    let tools = serde_json::from_str::<Only>(request).ok()?.tools?;
    let declared = |n: &str| {
        tools.iter().any(|t| {
            let f = t.get("function").unwrap_or(t);
            f.get("name").and_then(Value::as_str) == Some(n)
        })
    };
    (!declared(name) && declared(head)).then(|| head.to_owned())
}

/// `text` with the entities an XML-style attribute escapes read back: `&quot;` as `"`, then
/// `&amp;` as `&` (the reverse of escaping `&` first).
pub(crate) fn unescape_entities(text: &str) -> String {
    text.replace("&quot;", "\"").replace("&amp;", "&")
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

mod rules;
#[cfg(test)]
mod tests;
