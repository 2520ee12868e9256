//! Tag-form calls: their text as a JSON object of arguments. By vLLM's rules, where the tag
//! pattern cuts at its value ([`TagParts`]), the object is sent as the text comes: each tag
//! once its value ends, and a value that stays a string whatever its text, as its text comes,
//! so that the state holds only the text a delimiter may still take (the chunk's cost stays
//! flat however long the value). Else the call's text is kept and read once, when it closes.

use super::*;
use crate::parse::template::spec::TagParts;
use serde_json::Value;

/// How a tag-form call's values and keys are read.
#[derive(Clone, Copy)]
pub(super) struct Reading {
    pub values: Values,
    pub typing: Typing,
    /// Keys have `&quot;` and `&amp;` read as `"` and `&`.
    pub entities: bool,
}

/// What a tag pattern's groups say of its values: `string` (a tag whose `string` is `true`
/// holds a string, others JSON) and `type` (a tag whose `type` is `string` or absent holds a
/// string, others JSON).
#[derive(Clone, Copy)]
struct Marks {
    string: bool,
    kind: bool,
}

impl Marks {
    fn of(re: &regex::Regex) -> Marks {
        let has = |name: &str| re.capture_names().flatten().any(|n| n == name);
        Marks {
            string: has("string"),
            kind: has("type"),
        }
    }

    /// Whether the tag's groups make its value a string: `Some(true)` a string, `Some(false)`
    /// JSON where it is JSON, `None` neither group.
    fn say(self, caps: &regex::Captures<'_>) -> Option<bool> {
        if self.string && caps.name("string").is_some_and(|m| m.as_str() == "true") {
            return Some(true);
        }
        if self.kind && caps.name("type").is_none_or(|m| m.as_str() == "string") {
            return Some(true);
        }
        (self.string || self.kind).then_some(false)
    }
}

/// A tag's value: its text read as `reading` and the tag's groups say, before the tool's
/// schema types it.
fn read_value(reading: Reading, said: Option<bool>, raw: &str, prop: Option<&Value>) -> Val {
    let text = || Val::Str(raw.to_owned());
    match (said, reading.typing, reading.values) {
        (Some(true), _, _) => text(),
        (_, Typing::Loads, _) => typed::loads(raw).unwrap_or_else(text),
        (_, Typing::Muse, _) => match prop.and_then(|p| p.get("type")).and_then(Value::as_str) {
            Some("string") => text(),
            _ => typed::loads(raw).unwrap_or_else(text),
        },
        (_, Typing::Poolside, _) => typed::poolside_value(raw, prop),
        (Some(false), _, _) => typed::loads(raw).unwrap_or_else(text),
        (None, Typing::Vllm, _) | (None, _, Values::Raw) => text(),
        (None, _, Values::Text) => Val::Str(py_strip(raw).to_owned()),
        (None, _, Values::Json) => {
            typed::loads(raw).unwrap_or_else(|| Val::Str(py_strip(raw).to_owned()))
        }
    }
}

fn read_key(caps: &regex::Captures<'_>, entities: bool) -> Option<String> {
    let key = caps.name("key")?.as_str();
    Some(match entities {
        true => typed::unescape_entities(key),
        false => key.to_owned(),
    })
}

/// A tag-form call's text as a JSON object: each tag's key and value (a later key takes the
/// first one's place), typed by the tool's properties. By vLLM's rules every value is the tag's
/// text as written before it is typed; by transformers', the template's value parser reads it.
/// A group `next` goes on from where that group begins.
pub(super) fn tags_to_json(
    tag: &regex::Regex,
    reading: Reading,
    wrappers: &[String],
    body: &str,
    props: Option<&serde_json::Map<String, Value>>,
) -> String {
    let marks = Marks::of(tag);
    let mut pairs: Vec<(String, Val)> = Vec::new();
    let mut at = 0;
    while at <= body.len() {
        let Some(caps) = tag.captures_at(body, at) else {
            break;
        };
        let start = caps.get(0).map_or(at, |m| m.start());
        let end = caps.get(0).map_or(at, |m| m.end());
        let next = caps.name("next").map_or(end, |m| m.start());
        // Each tag moves on (an empty one by a char), so the loop ends.
        at = match body.get(start..).and_then(|r| r.chars().next()) {
            _ if next > start => next,
            Some(c) => start + c.len_utf8(),
            None => body.len() + 1,
        };
        let Some(key) = read_key(&caps, reading.entities) else {
            continue;
        };
        let raw = caps.name("value").map_or("", |m| m.as_str());
        let prop = props.and_then(|p| p.get(key.as_str()));
        let value = read_value(reading, marks.say(&caps), raw, prop);
        typed::put(&mut pairs, key, value);
    }
    if let Some(props) = props {
        if !wrappers.is_empty() {
            pairs = typed::unwrap_args(pairs, wrappers, props);
        }
        typed::type_args(reading.typing, &mut pairs, props);
    }
    typed::dump_args(&pairs)
}

/// `text` as it reads inside a JSON string.
fn push_escaped(out: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    let quoted = serde_json::to_string(text).unwrap_or_default();
    out.push_str(
        quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or_default(),
    );
}

/// A tag-form call whose tags are sent as they come.
#[derive(Clone, Copy)]
pub(super) struct TagCall<'t> {
    pub parts: &'t TagParts,
    pub reading: Reading,
    pub wrappers: &'t [String],
}

impl<'t> TagCall<'t> {
    /// The open region's call, where its tags are sent as they come under `typing`.
    pub(super) fn of(calls: &'t Calls, typing: Typing) -> Option<TagCall<'t>> {
        match calls {
            Calls::Tags {
                values,
                entities,
                parts: Some(parts),
                wrappers,
                ..
            } if typed::types_each(typing) => Some(TagCall {
                parts,
                reading: Reading {
                    values: *values,
                    typing,
                    entities: *entities,
                },
                wrappers,
            }),
            _ => None,
        }
    }
}

impl TemplateState {
    /// Reads the open call's tags, as far as its text decides them, into its arguments; with
    /// `end` (the call closed, or the output ended), all of them, and the object's close.
    ///
    /// Each tag is sent once its value ends (typed by the tool's schema), a string value as
    /// its text comes. The text of a tag that no value end follows is dropped at the end,
    /// unless its value was a string being sent: that string ends where the text does. A key
    /// given twice is sent twice, as written. A first key that may be a wrapper alone
    /// (`wrappers`) keeps the call's text for its close.
    pub(super) fn read_tags(
        &mut self,
        call: TagCall<'_>,
        k: Knobs<'_>,
        end: bool,
        out: &mut Delta,
    ) {
        let TagCall {
            parts,
            reading,
            wrappers,
        } = call;
        let mut body = std::mem::take(&mut self.body);
        let marks = Marks::of(parts.open.regex());
        let mut props = None;
        let mut piece = String::new();
        let mut at = 0;
        loop {
            if self.in_value {
                let found = match parts.end.find(&body, at, end) {
                    // At the end, a value whose end never came stops where one could still
                    // have begun (a close the output cut, or the newline before one).
                    Found::None if end => match parts.end.find(&body, at, false) {
                        Found::Pending(s) => Found::Match(s, body.len()),
                        _ => Found::None,
                    },
                    found => found,
                };
                let stop = match found {
                    Found::Match(s, _) | Found::Pending(s) => s,
                    Found::None => body.len(),
                };
                push_escaped(&mut piece, body.get(at..stop).unwrap_or_default());
                at = stop;
                match found {
                    Found::Match(s, e) => {
                        piece.push('"');
                        self.in_value = false;
                        at = after_value(parts, &body, s, e);
                    }
                    Found::Pending(_) => break,
                    Found::None => {
                        if end {
                            piece.push('"');
                            self.in_value = false;
                        }
                        break;
                    }
                }
                continue;
            }
            let (s, e) = match parts.open.find(&body, at, end) {
                Found::Match(s, e) => (s, e),
                Found::Pending(s) => {
                    at = s;
                    break;
                }
                Found::None => {
                    at = body.len();
                    break;
                }
            };
            let caps = parts.open.captures_at(&body, s);
            let Some((caps, key)) =
                caps.and_then(|c| read_key(&c, reading.entities).map(|k| (c, k)))
            else {
                // A match moves on by at least a char.
                at = e.max(
                    s + body
                        .get(s..)
                        .and_then(|r| r.chars().next())
                        .map_or(1, char::len_utf8),
                );
                continue;
            };
            let said = marks.say(&caps);
            let ended = parts.end.find(&body, e, end);
            if self.held_typed && !matches!(ended, Found::Match(..)) {
                // A typed value, held until its end.
                at = if end { body.len() } else { s };
                break;
            }
            let props = props.get_or_insert_with(|| self.schema(k));
            let prop = props.as_ref().and_then(|p| p.get(key.as_str()));
            // Arguments that may be one wrapper key alone are read when the call closes.
            if !self.begun
                && wrappers.contains(&key)
                && props.as_ref().is_none_or(|p| !p.contains_key(&key))
            {
                self.kept = true;
                at = s;
                break;
            }
            let (value, next) = match ended {
                Found::Match(vs, ve) => {
                    self.held_typed = false;
                    let raw = body.get(e..vs).unwrap_or_default();
                    let mut pair = [(key.clone(), read_value(reading, said, raw, prop))];
                    if let Some(p) = props.as_ref() {
                        typed::type_args(reading.typing, &mut pair, p);
                    }
                    let mut dumped = String::new();
                    typed::dump(&pair[0].1, &mut dumped);
                    (dumped, after_value(parts, &body, vs, ve))
                }
                _ => {
                    let read_as_written = match said {
                        Some(said) => said,
                        None => reading.typing == Typing::Vllm || reading.values == Values::Raw,
                    };
                    let string = typed::types_each(reading.typing)
                        && read_as_written
                        && prop.is_none_or(|p| typed::keeps_text(reading.typing, p));
                    if !string {
                        // Held until its end; a typed value the end of the call cut is dropped.
                        self.held_typed = !end;
                        at = if end { body.len() } else { s };
                        break;
                    }
                    self.in_value = true;
                    ("\"".to_owned(), e)
                }
            };
            piece.push_str(if self.begun { ", " } else { "{" });
            self.begun = true;
            piece.push_str(&Value::String(key).to_string());
            piece.push_str(": ");
            piece.push_str(&value);
            at = next;
        }
        // The text not yet decided stays, in the same buffer.
        match body.is_char_boundary(at) {
            true => drop(body.drain(..at)),
            false => body.clear(),
        }
        self.body = body;
        if self.kept {
            return;
        }
        if end {
            piece.push_str(if self.begun { "}" } else { "{}" });
        }
        if !piece.is_empty() && (k.rules.parallel || self.calls == 1) {
            out.push_arguments(self.calls.saturating_sub(1), &piece);
        }
    }
}

/// Where text goes on after a value's end matched at `s..e`: the end's group `next` or `stop`,
/// where it has one (the next tag or the call's markup begins there), else `e`.
fn after_value(parts: &TagParts, body: &str, s: usize, e: usize) -> usize {
    parts
        .end
        .captures_at(body, s)
        .and_then(|c| c.name("next").or_else(|| c.name("stop")).map(|m| m.start()))
        .unwrap_or(e)
}
