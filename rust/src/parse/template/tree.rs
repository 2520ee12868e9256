//! Arguments written as nested elements (`xml-tree`, our addition, for MiniMax-M3): each
//! structural tag is prefixed by a marker `M`, `M<key>value M</key>`, and a value is text or
//! more elements. Read when the call closes (or the output cuts it), as vLLM's `minimax_m3`
//! parser reads it:
//!
//! - **Parameters**: from the start, whitespace is skipped and one element read, again and
//!   again, until the text does not begin with `M<` or an element is malformed; the elements
//!   read before that are kept.
//! - **An element**: its name runs from after `M<` to the first `>` (not empty, not all
//!   whitespace, not beginning with `/`). Then, at each next `M`: the text before it is a text
//!   piece; `M</name>` (the name exactly) ends the element; `M<` begins a child element (a
//!   malformed child makes this one malformed); anything else, or no `M` at all, is malformed.
//!   Elements nest at most [`MAX_DEPTH`] deep.
//! - **Values**: an element without children is its text pieces joined, as written. One with
//!   children is its `(name, value)` children in order, and, where the text pieces are not all
//!   whitespace, their joined text under `$text` (`$` prefixed again while a child has that
//!   name).
//! - **Typing by the property's schema**: a schema's container is the first of `array` and
//!   `object` in its `type`, else (no `type`) an array where it has `items`, an object where
//!   it has `properties` or `additionalProperties`, else the first container of its `anyOf`,
//!   then `oneOf`, choices. Text without a schema is a string; with one, whitespace (or
//!   nothing) where the schema has a container and does not allow `string` is `[]` or `{}`,
//!   else the text is typed by vLLM's rules ([`typed`]). An element with children is a list
//!   of its children's values (typed by `items`) where the container is an array, else an
//!   object typed by the container's schema (none for a schema without a container). In an
//!   object a name given again makes a list of its values; each value is typed by the
//!   schema's `properties` of its name, else by `additionalProperties`.

use serde_json::{Map, Value};

use super::typed::{self, Val};

/// How deep elements nest (the parameters are depth 1); deeper is malformed.
pub(crate) const MAX_DEPTH: usize = 128;

/// The key of an element's text beside its children.
const TEXT_KEY: &str = "$text";

/// An element's value as written: its text, or its children.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Text(String),
    Kids(Vec<(String, Node)>),
}

/// The parameters of a call's text, typed by the tool's properties (none: strings and
/// objects of strings), as `(key, value)` pairs in the order written.
pub(crate) fn arguments(
    body: &str,
    marker: &str,
    props: Option<&Map<String, Value>>,
) -> Vec<(String, Val)> {
    let params = params(body, marker);
    let schema = props.map(|p| {
        let mut s = Map::new();
        s.insert("properties".to_owned(), Value::Object(p.clone()));
        Value::Object(s)
    });
    match object(params, schema.as_ref()) {
        Val::Dict(pairs) => pairs,
        _ => Vec::new(),
    }
}

/// The top-level elements, up to the first text that is not one.
fn params(body: &str, marker: &str) -> Vec<(String, Node)> {
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        let rest = body.get(pos..).unwrap_or_default();
        pos += rest.len() - rest.trim_start_matches(py_space).len();
        match element(body, pos, marker) {
            Some((name, node, end)) => {
                out.push((name, node));
                pos = end;
            }
            None => return out,
        }
    }
}

/// Python's `str.isspace`.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// One open element on the reader's stack.
struct Open {
    name: String,
    text: String,
    kids: Vec<(String, Node)>,
}

/// Reads `M<name>` at `start` (if there is one) through its `M</name>`: the name, the value and
/// where it ends; `None` where it is malformed. Iterative, so nesting costs no native stack.
fn element(body: &str, start: usize, marker: &str) -> Option<(String, Node, usize)> {
    let open_of = |at: usize| -> Option<(String, usize)> {
        let after = body.get(at..)?.strip_prefix(marker)?.strip_prefix('<')?;
        let from = at + marker.len() + 1;
        let gt = after.find('>')?;
        let name = after.get(..gt)?;
        if name.is_empty() || name.starts_with('/') || name.chars().all(py_space) {
            return None;
        }
        Some((name.to_owned(), from + gt + 1))
    };
    let (name, mut pos) = open_of(start)?;
    let mut stack = vec![Open {
        name,
        text: String::new(),
        kids: Vec::new(),
    }];
    loop {
        let at = pos + body.get(pos..)?.find(marker)?;
        let top = stack.last_mut()?;
        top.text.push_str(body.get(pos..at)?);
        let after = body.get(at + marker.len()..)?;
        let close = after
            .strip_prefix("</")
            .and_then(|r| r.strip_prefix(top.name.as_str()))
            .is_some_and(|r| r.starts_with('>'));
        if close {
            pos = at + marker.len() + 2 + top.name.len() + 1;
            let done = stack.pop()?;
            let node = value(done.text, done.kids);
            match stack.last_mut() {
                Some(parent) => parent.kids.push((done.name, node)),
                None => return Some((done.name, node, pos)),
            }
            continue;
        }
        let (name, next) = open_of(at)?;
        if stack.len() >= MAX_DEPTH {
            return None;
        }
        stack.push(Open {
            name,
            text: String::new(),
            kids: Vec::new(),
        });
        pos = next;
    }
}

/// An element's value from its text pieces and children.
fn value(text: String, mut kids: Vec<(String, Node)>) -> Node {
    if kids.is_empty() {
        return Node::Text(text);
    }
    if !text.chars().all(py_space) {
        let mut key = TEXT_KEY.to_owned();
        while kids.iter().any(|(k, _)| *k == key) {
            key.insert(0, '$');
        }
        kids.push((key, Node::Text(text)));
    }
    Node::Kids(kids)
}

/// Which container a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Container {
    Array,
    Object,
}

/// A schema's container and the schema it was found in (an `anyOf` choice, say).
fn container(schema: &Value) -> Option<(Container, &Value)> {
    let obj = schema.as_object()?;
    let has = |kind: &str| match obj.get("type") {
        Some(Value::String(t)) => t == kind,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(kind)),
        _ => false,
    };
    if has("array") {
        return Some((Container::Array, schema));
    }
    if has("object") {
        return Some((Container::Object, schema));
    }
    if !obj.contains_key("type") {
        if obj.contains_key("items") {
            return Some((Container::Array, schema));
        }
        if obj.contains_key("properties") || obj.contains_key("additionalProperties") {
            return Some((Container::Object, schema));
        }
    }
    ["anyOf", "oneOf"].into_iter().find_map(|union| {
        obj.get(union)?
            .as_array()?
            .iter()
            .filter(|c| c.is_object())
            .find_map(container)
    })
}

/// A value typed by its schema (`None`: none, or not an object).
fn convert(node: Node, schema: Option<&Value>) -> Val {
    let schema = schema.filter(|s| s.is_object());
    let found = schema.and_then(container);
    match node {
        Node::Text(text) => match schema {
            None => Val::Str(text),
            Some(s) => match found {
                Some((kind, _)) if !typed::vllm_names_string(s) && text.chars().all(py_space) => {
                    match kind {
                        Container::Array => Val::List(Vec::new()),
                        Container::Object => Val::Dict(Vec::new()),
                    }
                }
                _ => typed::vllm_coerce(&text, s),
            },
        },
        Node::Kids(kids) => match found {
            Some((Container::Array, s)) => {
                let items = s.get("items");
                Val::List(kids.into_iter().map(|(_, n)| convert(n, items)).collect())
            }
            Some((Container::Object, s)) => object(kids, Some(s)),
            None => object(kids, None),
        },
    }
}

/// Named values as an object typed by `schema`: a name given again makes a list of its
/// values, in the place of its first.
fn object(kids: Vec<(String, Node)>, schema: Option<&Value>) -> Val {
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let additional = schema.and_then(|s| s.get("additionalProperties"));
    let mut pairs: Vec<(String, Val)> = Vec::new();
    // Names whose value is already the list of their repeats.
    let mut repeated: Vec<String> = Vec::new();
    for (name, node) in kids {
        let schema = props.and_then(|p| p.get(&name)).or(additional);
        let v = convert(node, schema);
        match pairs.iter_mut().find(|(k, _)| *k == name) {
            None => pairs.push((name, v)),
            Some((_, Val::List(items))) if repeated.contains(&name) => items.push(v),
            Some((_, slot)) => {
                let first = std::mem::replace(slot, Val::Null);
                *slot = Val::List(vec![first, v]);
                repeated.push(name);
            }
        }
    }
    Val::Dict(pairs)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const M: &str = "]<]minimax[>[";

    fn el(name: &str, value: &str) -> String {
        format!("{M}<{name}>{value}{M}</{name}>")
    }

    fn args(body: &str, props: &str) -> String {
        let props: Value = serde_json::from_str(props).unwrap();
        typed::dump_args(&arguments(body, M, props.as_object()))
    }

    #[test]
    fn scalars_are_typed_by_their_schema() {
        let body = format!("\n{}\n{}\n", el("city", "Paris"), el("days", "3"));
        let props = r#"{"city": {"type": "string"}, "days": {"type": "integer"}}"#;
        assert_eq!(args(&body, props), r#"{"city": "Paris", "days": 3}"#);
        assert_eq!(args(&body, "{}"), r#"{"city": "Paris", "days": "3"}"#);
    }

    #[test]
    fn children_are_objects_or_lists_by_the_schema() {
        let items = format!(
            "{}{}",
            el("item", &el("sku", "a")),
            el("item", &el("sku", "b"))
        );
        let body = el("items", &items);
        let list = r#"{"items": {"type": "array", "items": {"type": "object",
            "properties": {"sku": {"type": "string"}}}}}"#;
        assert_eq!(
            args(&body, list),
            r#"{"items": [{"sku": "a"}, {"sku": "b"}]}"#
        );
        // Without a schema, a name given twice is a list under that name.
        assert_eq!(
            args(&body, "{}"),
            r#"{"items": {"item": [{"sku": "a"}, {"sku": "b"}]}}"#
        );
    }

    #[test]
    fn mixed_text_and_empty_elements() {
        let body = format!(
            "{}{}{}",
            el("note", &format!("Hello {} world", el("b", "bold"))),
            el("empty_o", ""),
            el("empty_a", " ")
        );
        let props = r#"{"empty_o": {"type": "object"}, "empty_a": {"type": "array"}}"#;
        assert_eq!(
            args(&body, props),
            r#"{"note": {"b": "bold", "$text": "Hello  world"}, "empty_o": {}, "empty_a": []}"#
        );
        let clash = el("n", &format!("x{}y", el("$text", "z")));
        assert_eq!(
            args(&clash, "{}"),
            r#"{"n": {"$text": "z", "$$text": "xy"}}"#
        );
    }

    #[test]
    fn a_malformed_element_ends_the_reading() {
        let body = format!(
            "{}{M}<days>3{M}</wrong>{}",
            el("city", "Oslo"),
            el("unit", "C")
        );
        assert_eq!(args(&body, "{}"), r#"{"city": "Oslo"}"#);
        let text_between = format!("{} and {}", el("city", "Oslo"), el("unit", "C"));
        assert_eq!(args(&text_between, "{}"), r#"{"city": "Oslo"}"#);
        // Cut before its close: what came before is kept.
        assert_eq!(
            args(&format!("{}{M}<unit>C", el("city", "Oslo")), "{}"),
            r#"{"city": "Oslo"}"#
        );
    }

    #[test]
    fn nesting_is_bounded_and_costs_no_native_stack() {
        let deep = |n: usize| {
            let mut s = String::new();
            for _ in 0..n {
                s.push_str(&format!("{M}<a>"));
            }
            s.push('x');
            for _ in 0..n {
                s.push_str(&format!("{M}</a>"));
            }
            s
        };
        assert!(args(&deep(MAX_DEPTH), "{}").starts_with(r#"{"a": {"a": "#));
        assert_eq!(args(&deep(MAX_DEPTH + 1), "{}"), "{}");
        assert_eq!(args(&deep(100_000), "{}"), "{}");
    }
}
