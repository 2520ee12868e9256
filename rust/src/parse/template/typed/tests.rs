//! Argument typing, by vLLM's rules and transformers'.

#![allow(clippy::unwrap_used)]

use super::rules::{hy_coerce, transformers_coerce, vllm_coerce};
use super::*;

fn vllm(text: &str, schema: &str) -> String {
    let mut s = String::new();
    dump(
        &vllm_coerce(text, &serde_json::from_str(schema).unwrap()),
        &mut s,
    );
    s
}

fn hf(text: &str, schema: &str) -> Option<String> {
    let v = transformers_coerce(text, &serde_json::from_str(schema).unwrap())?;
    let mut s = String::new();
    dump(&v, &mut s);
    Some(s)
}

#[test]
fn floats_are_written_as_python_writes_them() {
    let cases = [
        (21.5, "21.5"),
        (1e-5, "1e-05"),
        (0.0001, "0.0001"),
        (1e16, "1e+16"),
        (1.5e300, "1.5e+300"),
        (123456.0, "123456.0"),
        (-0.25, "-0.25"),
        (2.5e-7, "2.5e-07"),
    ];
    for (x, want) in cases {
        assert_eq!(py_float(x), want, "{x}");
    }
}

#[test]
fn vllm_types_a_value_by_priority() {
    assert_eq!(vllm("75001", r#"{"type": "string"}"#), r#""75001""#);
    assert_eq!(vllm("3", r#"{"type": "integer"}"#), "3");
    assert_eq!(vllm(" 1_000 ", r#"{"type": "integer"}"#), "1000");
    assert_eq!(vllm("3.5", r#"{"type": "integer"}"#), "3.5");
    assert_eq!(vllm("three", r#"{"type": "integer"}"#), r#""three""#);
    assert_eq!(vllm("2.0", r#"{"type": "number"}"#), "2");
    assert_eq!(vllm("1e3", r#"{"type": "number"}"#), "1000");
    assert_eq!(vllm("0.00001", r#"{"type": "number"}"#), "1e-05");
    assert_eq!(vllm("inf", r#"{"type": "number"}"#), r#""inf""#);
    assert_eq!(vllm("FALSE", r#"{"type": "boolean"}"#), "false");
    assert_eq!(vllm("1", r#"{"type": "boolean"}"#), "true");
    assert_eq!(vllm("None", r#"{"type": "null"}"#), r#""None""#);
    assert_eq!(vllm("9", r#"{"type": ["string", "integer"]}"#), "9");
    assert_eq!(
        vllm("7", r#"{"anyOf": [{"type": "string"}, {"type": "int"}]}"#),
        "7"
    );
    assert_eq!(vllm("8", "{}"), r#""8""#);
    assert_eq!(vllm(r#"{"a":1}"#, r#"{"type": "array"}"#), r#"{"a": 1}"#);
    assert_eq!(vllm("5", r#"{"type": "mystery"}"#), "5");
    assert_eq!(vllm("2", r#"{"enum": [1, 2]}"#), "2");
}

#[test]
fn vllm_types_json_scalars_as_their_text() {
    let props: serde_json::Map<String, Value> = serde_json::from_str(
        r#"{"s": {"type": "string"}, "n": {"type": "number"}, "b": {"type": "integer"},
            "l": {"type": "array", "items": {"type": "string"}}}"#,
    )
    .unwrap();
    let Some(Val::Dict(mut args)) =
        loads(r#"{"s": 5, "n": 2.0, "b": true, "l": [1, null], "x": 1}"#)
    else {
        panic!("not an object");
    };
    assert!(type_args(Typing::Vllm, &mut args, &props));
    assert_eq!(
        dump_args(&args),
        r#"{"s": "5", "n": 2, "b": true, "l": ["1", "null"], "x": 1}"#
    );
}

#[test]
fn wrapped_arguments_are_unwrapped_where_the_tool_declares_their_keys() {
    let props: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(r#"{"city": {"type": "string"}}"#).unwrap();
    let wrappers = ["arguments".to_owned(), "input".to_owned()];
    let one = |k: &str, v: Val| vec![(k.to_owned(), v)];
    let inner = Val::Dict(one("city", Val::Str("Paris".into())));
    assert_eq!(
        unwrap_args(one("input", inner.clone()), &wrappers, &props),
        one("city", Val::Str("Paris".into()))
    );
    let text = Val::Str(r#"{"city": "Paris"}"#.into());
    assert_eq!(
        unwrap_args(one("arguments", text), &wrappers, &props),
        one("city", Val::Str("Paris".into()))
    );
    // An undeclared key inside, or a second key beside, keeps the arguments as they are.
    let other = one("arguments", Val::Dict(one("x", Val::Int("1".into()))));
    assert_eq!(unwrap_args(other.clone(), &wrappers, &props), other);
    let mut two = one("arguments", inner);
    two.push(("city".to_owned(), Val::Null));
    assert_eq!(unwrap_args(two.clone(), &wrappers, &props), two);
}

#[test]
fn transformers_types_in_the_declared_order() {
    assert_eq!(hf("3", r#"{"type": "integer"}"#).as_deref(), Some("3"));
    assert_eq!(hf("3.0", r#"{"type": "integer"}"#).as_deref(), Some("3"));
    assert_eq!(hf("2.0", r#"{"type": "number"}"#).as_deref(), Some("2.0"));
    assert_eq!(hf("1e3", r#"{"type": "number"}"#).as_deref(), Some("1000"));
    assert_eq!(hf(" None ", r#"{"type": "null"}"#).as_deref(), Some("null"));
    assert_eq!(hf("[1]", r#"{"type": "object"}"#), None);
    assert_eq!(
        hf("9", r#"{"type": ["string", "integer"]}"#).as_deref(),
        Some("9")
    );
    assert_eq!(hf("x", r#"{"type": "integer", "nullable": true}"#), None);
}

#[test]
fn objects_keep_the_order_their_keys_came_in() {
    let v = loads(r#"{"b": 1, "a": [true, null, 1.0], "b": 2}"#).unwrap();
    let mut s = String::new();
    dump(&v, &mut s);
    assert_eq!(s, r#"{"b": 2, "a": [true, null, 1.0]}"#);
}

#[test]
fn a_tools_properties_are_found_by_name() {
    let req = r#"{"tools": [{"type": "function", "function": {"name": "f",
        "parameters": {"properties": {"n": {"type": "integer"}}}}}]}"#;
    assert!(properties(req, "f").unwrap().contains_key("n"));
    assert!(properties(req, "g").is_none());
    assert!(properties("{}", "f").is_none());
}

#[test]
fn a_property_given_by_a_local_reference_is_the_schema_it_names() {
    let req = r##"{"tools": [{"type": "function", "function": {"name": "f", "parameters": {
        "properties": {"loc": {"$ref": "#/$defs/Loc"}, "via": {"$ref": "#/$defs/Alias"},
            "lost": {"$ref": "#/$defs/Nowhere"}, "far": {"$ref": "https://x/y"}},
        "$defs": {"Loc": {"type": "object"}, "Alias": {"$ref": "#/$defs/Loc"}}}}}]}"##;
    let p = properties(req, "f").unwrap();
    assert_eq!(p["loc"], serde_json::json!({"type": "object"}));
    assert_eq!(p["via"], serde_json::json!({"type": "object"}));
    assert_eq!(p["lost"], serde_json::json!({"$ref": "#/$defs/Nowhere"}));
    assert_eq!(p["far"], serde_json::json!({"$ref": "https://x/y"}));
    // A reference to itself ends after the bound.
    let looped = r##"{"tools": [{"function": {"name": "f", "parameters": {
        "properties": {"a": {"$ref": "#/properties/a"}}}}}]}"##;
    assert!(properties(looped, "f").unwrap()["a"].get("$ref").is_some());
}

#[test]
fn hy_v3_types_by_hunyuans_names_then_falls_back() {
    let hy = |text: &str, schema: &str| {
        let mut s = String::new();
        dump(
            &hy_coerce(text, &serde_json::from_str(schema).unwrap()),
            &mut s,
        );
        s
    };
    let cases = [
        ("TRUE", r#"{"type": "boolean"}"#, "true"),
        (" 42 ", r#"{"type": "int64"}"#, "42"),
        ("1_000", r#"{"type": "integer"}"#, "1000"),
        ("4.5", r#"{"type": "integer"}"#, "4.5"),
        ("5", r#"{"type": "number"}"#, "5"),
        ("1e3", r#"{"type": "float"}"#, "1000.0"),
        ("{'a': 1}", r#"{"type": "dict"}"#, r#"{"a": 1}"#),
        ("(1, 2)", r#"{"type": "tuple"}"#, "[1, 2]"),
        ("[1,", r#"{"type": "array"}"#, r#""[1,""#),
        (
            "7",
            r#"{"anyOf": [{"type": "integer"}, {"type": "string"}]}"#,
            "7",
        ),
        (
            "abc",
            r#"{"anyOf": [{"type": "integer"}, {"type": "string"}]}"#,
            r#""abc""#,
        ),
        ("false", r#"{"type": ["boolean", "string"]}"#, "false"),
        ("[1]", "{}", r#""[1]""#),
        ("5", r#"{"type": "INT"}"#, "5"),
    ];
    for (text, schema, want) in cases {
        assert_eq!(hy(text, schema), want, "{text} {schema}");
    }
}

#[test]
fn poolside_keeps_strings_and_reads_the_rest() {
    let pool = |text: &str, schema: Option<&str>| {
        let schema: Option<Value> = schema.map(|s| serde_json::from_str(s).unwrap());
        let mut s = String::new();
        dump(&poolside_value(text, schema.as_ref()), &mut s);
        s
    };
    assert_eq!(pool(" 007 ", Some(r#"{"type": "string"}"#)), r#"" 007 ""#);
    assert_eq!(pool(" 42 ", Some(r#"{"type": "integer"}"#)), "42");
    assert_eq!(pool("3", None), "3");
    assert_eq!(pool("True", None), "true");
    assert_eq!(pool("{'a': (1,)}", None), r#"{"a": [1]}"#);
    assert_eq!(
        pool(" x y ", Some(r#"{"type": ["string", "null"]}"#)),
        r#""x y""#
    );
}
