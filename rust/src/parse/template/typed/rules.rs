//! Each family's rules for typing one value by its property's schema: vLLM's (and its
//! `hy_v3` and `poolside_v1` parsers'), and transformers'.

use serde_json::Value;

use super::{Typing, Val, dump, loads, py_float_of, py_int, py_space, whole_float};

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

/// The type names a property's schema declares, as vLLM reads them, as written (before vLLM's
/// aliases; none: empty).
pub(crate) fn vllm_type_names(schema: &Value) -> Vec<String> {
    let mut declared = Vec::new();
    vllm_types(schema, &mut declared);
    declared
}

/// Whether the types a property's schema declares, as vLLM reads them (none: `string`), name
/// `string` as written (before vLLM's aliases).
pub(crate) fn vllm_names_string(schema: &Value) -> bool {
    let declared = vllm_type_names(schema);
    declared.is_empty() || declared.iter().any(|t| t == "string")
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
pub(crate) fn vllm_coerce(text: &str, schema: &Value) -> Val {
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
pub(super) fn hy_coerce(text: &str, schema: &Value) -> Val {
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
        .or_else(|| super::super::pythonic::literal(text))
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
        .or_else(|| super::super::pythonic::literal(text))
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
pub(super) fn transformers_coerce(raw: &str, schema: &Value) -> Option<Val> {
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

/// Types each argument whose key `props` declares, by `typing`'s rules; returns whether a
/// value changed.
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
            Typing::Loads | Typing::Muse => None,
        };
        if let Some(v) = typed.filter(|v| v != value) {
            *value = v;
            changed = true;
        }
    }
    changed
}
