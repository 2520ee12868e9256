//! A response template's JSON, checked and compiled: its fields, what each is to a chat message
//! (content, reasoning, tool calls, or nothing the wire sends) and its delimiters.

use serde::Deserialize;
use serde_json::Value;

use super::delim::Delim;
use super::lax::Dialect;
use super::readers::Reader;

/// Most fields a template may have (a field's index travels in the state as a byte).
const MAX_FIELDS: usize = 32;

/// What a field's text becomes.
#[derive(Debug, Clone)]
pub(crate) enum Role {
    Content,
    Reasoning,
    Tools(Calls),
    /// The text of a call block around its calls (`tool_text`): from its open delimiter (the
    /// block's marker), and from where each call closes, to its close delimiter (where the next
    /// call opens); dropped, and watched only where calls are parsed (else its delimiters are
    /// text where they are).
    CallText,
    /// A call block where the tool parser is named but the request turns calls off
    /// (`tools_block`, our addition: `tool_choice: "none"`, no tools): dropped, as vLLM's
    /// parsers drop it then; watched only there.
    CallsOff,
    /// A field the chat message has no place for: its text is dropped.
    Other,
}

/// How a tool-call field's text gives calls.
#[derive(Debug, Clone)]
pub(crate) enum Calls {
    /// JSON holding the calls: an object with a name and arguments, or a list of them (an
    /// empty `name`: each object's one key is the name, its value the arguments).
    Object { name: String, arguments: String },
    /// The name is captured by the open delimiter; the text is the arguments' JSON.
    Raw { name: String },
    /// As `Raw`, in a JSON dialect: converted to JSON when the call closes.
    Lax { name: String, dialect: Dialect },
    /// The name is captured by the open delimiter; the text is `key`/`value` tags, made into a
    /// JSON object of strings (or of JSON values, read leniently): when the call closes, or tag
    /// by tag as the text comes (`parts`, [`TagParts`]). Where
    /// the tag pattern has a group `string`, a tag whose `string` is `true` holds a string and
    /// any other (or none) JSON, else its text as written (DSML's `string="false"`); a group
    /// `next` is where the next tag begins (a tag without its close ends there).
    Tags {
        name: String,
        tag: Box<regex::Regex>,
        values: Values,
        /// `content_args.wrappers`: arguments that are one of these keys alone, which the
        /// tool does not declare, holding an object (or its JSON text) of keys the tool
        /// declares, are that object (vLLM's DSML parsers unwrap them).
        wrappers: Vec<String>,
        /// `content_args.closed_only` (our addition, for Kimi K3): a call is sent, name and
        /// arguments, only once its close delimiter matches; one the output cuts is dropped.
        closed_only: bool,
        /// `content_args.entities` (our addition, for Kimi K3): `&quot;` and `&amp;` in the
        /// name and the keys read as `"` and `&`.
        entities: bool,
        /// The tag pattern cut at its value, where a call's tags can be read as they come.
        parts: Option<Box<TagParts>>,
    },
    /// A Python list of calls (`[f(x=1), g(y='a')]`, [`super::pythonic`]) after the open
    /// delimiter, which captures the first call's name (the group `name`, or the one the
    /// transform names) and takes its `(`; the region ends with the list.
    /// With `lines` (`content_args.lines`, Olmo 3's form), the calls are not bracketed: they
    /// are one a line (or comma-separated), and the list ends where a line is no call.
    Pythonic { name: String, lines: bool },
    /// The name is captured by the open delimiter; the text is nested elements whose tags
    /// begin with `marker` (`content_args.marker`; `xml-tree`, our addition, for MiniMax-M3),
    /// read into a JSON object when the call closes or the output cuts it ([`super::tree`]).
    Tree { name: String, marker: String },
    /// The region's text, its delimiters included, read whole when it closes by a named reader
    /// ([`super::readers`]): its calls, or, where it gives none or the output cuts the region,
    /// the text as content.
    Reader(Reader),
}

/// A list of strings in `content_args` (absent: none).
fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    match v {
        None => Some(Vec::new()),
        Some(v) => v
            .as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect(),
    }
}

/// A tag pattern `OPEN(?P<value>.*?)END` as its two halves, so that a stream reads each tag
/// as it comes: once `OPEN` matches (with the `key` and any `string` or `type` group), the
/// value runs to where `END` first matches, as the lazy `.*?` of the whole pattern runs. Only
/// where the pattern has that form, `OPEN` does not look behind, and `END` holds no group but
/// `next`. `content_args.value_stops` (our addition) are texts that also end a value, and
/// text goes on from them: the call's own markup, which would else be a value's text where
/// the value's close is missing and its text is sent as it comes.
#[derive(Debug, Clone)]
pub(crate) struct TagParts {
    pub open: Delim,
    pub end: Delim,
}

impl TagParts {
    /// The two halves of `pattern`, where it has the form they need.
    fn of(pattern: &str, stops: &[String]) -> Option<Box<TagParts>> {
        const VALUE: &str = "(?P<value>.*?)";
        let (open, end) = pattern.split_once(VALUE)?;
        let groups = |p: &str| -> Option<Vec<String>> {
            let re = regex::Regex::new(p).ok()?;
            Some(re.capture_names().flatten().map(str::to_owned).collect())
        };
        let (open_groups, end_groups) = (groups(open)?, groups(end)?);
        let fits = open_groups.iter().any(|g| g == "key")
            && !open_groups.iter().any(|g| g == "value" || g == "next")
            && end_groups.iter().all(|g| g == "next");
        let stopped = match stops.is_empty() {
            true => end.to_owned(),
            false => {
                let stops: Vec<String> = stops.iter().map(|s| regex::escape(s)).collect();
                format!("(?:{end})|(?P<stop>{})", stops.join("|"))
            }
        };
        let parts = TagParts {
            open: Delim::pattern(open).ok()?,
            end: Delim::pattern(&stopped).ok()?,
        };
        (fits && !parts.open.looks_behind() && !end.is_empty()).then(|| Box::new(parts))
    }
}

/// How a tag's value is read (`content_args.value_parser`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Values {
    /// As written (no value parser).
    Raw,
    /// Stripped text.
    Text,
    /// JSON, else stripped text.
    Json,
}

/// One compiled field.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub name: String,
    pub open: Option<Delim>,
    pub close: Option<Delim>,
    pub role: Role,
    /// Text is stripped of surrounding whitespace (per region, as the value is).
    pub strip: bool,
    /// Only trailing whitespace is stripped (`"strip": "trailing"`, our addition: Cohere's
    /// parser keeps a region's leading whitespace).
    pub trailing: bool,
    /// Where its region opens, the leading whitespace of the text that follows, in whatever
    /// region, is dropped up to the first other text (`content_args.lstrip_after`, our
    /// addition: Cohere's parser trims from `<|START_THINKING|>` on, into the content if the
    /// reasoning is empty).
    pub lstrip_after: bool,
    /// A field of only an open delimiter whose matches are dropped wherever text goes, without
    /// ending the region they are in (`content_args.inline`, our addition: Cohere's citation
    /// tags, whose text stays).
    pub inline: bool,
    /// Put between the text of two regions of the field.
    pub join: String,
    /// A call field whose open is watched only inside a call block's text (`tool_text`), not
    /// in the implicit field's (`content_args.in_block`, our addition: MiniMax-M3's call
    /// outside its block is content).
    pub in_block: bool,
    /// Where it matches inside the field's region, the region ends there without its close (a
    /// call, dropped where it is sent only once closed); text goes on from the match
    /// (`content_args.stop_pattern`, our addition: a Muse message's end ends a call left open,
    /// a `<tool_call>` MiniCPM-V's reasoning).
    pub stop: Option<Delim>,
    /// A call's name `X.X` that the request's tools do not declare, where they declare `X`, is
    /// `X` (`content_args.collapse_doubled_names`, our addition, as vLLM's Muse parsers read
    /// the names Muse's chat template leads the model to write).
    pub collapse: bool,
    /// Once a region of the field has closed, its open delimiter is text
    /// (`content_args.once`, our addition: K2 Horizon's parser reads the first call block).
    pub once: bool,
    /// A JSON call field's region ends where its JSON does, as one without a close does; its
    /// close is taken only where it comes next (`content_args.ends_with_json`, our addition:
    /// xLAM's list of calls in a code fence, whose closing fence is dropped with it).
    pub ends_with_json: bool,
}

/// A compiled response template.
#[derive(Debug, Clone)]
pub struct Template {
    pub(crate) fields: Vec<Field>,
    /// The field without an open delimiter, where text outside every region goes.
    pub(crate) implicit: Option<usize>,
    pub(crate) anchor: Delim,
    /// Some delimiter looks behind its start, so the state keeps the char before its held text.
    pub(crate) looks_behind: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTemplate {
    #[serde(default = "one")]
    version: u64,
    #[serde(default)]
    #[allow(dead_code)]
    defaults: serde_json::Map<String, Value>,
    fields: serde_json::Map<String, Value>,
    start_anchor: Option<Value>,
    start_anchor_pattern: Option<String>,
}

fn one() -> u64 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawField {
    open: Option<Value>,
    open_pattern: Option<String>,
    close: Option<Value>,
    close_pattern: Option<String>,
    #[serde(default = "text")]
    content: String,
    #[serde(default)]
    content_args: serde_json::Map<String, Value>,
    #[serde(default)]
    repeats: bool,
    join: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    optional: Option<bool>,
    transform: Option<Value>,
    #[serde(default)]
    transform_each: bool,
}

fn text() -> String {
    "text".to_owned()
}

const CONTENT_PARSERS: [&str; 10] = [
    "text",
    "int",
    "float",
    "bool",
    "json",
    "xml-inline",
    "kv-lines",
    "pythonic",
    "xml-tree",
    "reader",
];

/// A literal delimiter (a string or a list of strings) or a pattern; at most one of the two.
fn delim(
    scope: &str,
    what: &str,
    literal: Option<&Value>,
    pattern: Option<&str>,
) -> Result<Option<Delim>, String> {
    match (literal, pattern) {
        (Some(_), Some(_)) => Err(format!(
            "{scope}: cannot specify both '{what}' and '{what}_pattern'"
        )),
        (Some(v), None) => {
            let literals: Vec<String> = match v {
                Value::String(s) => vec![s.clone()],
                Value::Array(items) if !items.is_empty() => items
                    .iter()
                    .map(|i| i.as_str().map(str::to_owned))
                    .collect::<Option<_>>()
                    .ok_or_else(|| format!("{scope}: '{what}' must list only strings"))?,
                _ => {
                    return Err(format!(
                        "{scope}: '{what}' must be a string or a non-empty list of strings"
                    ));
                }
            };
            if literals.iter().any(String::is_empty) {
                return Err(format!("{scope}: '{what}' literals cannot be empty"));
            }
            Delim::literals(&literals)
                .map(Some)
                .map_err(|e| format!("{scope}: {e}"))
        }
        (None, Some(p)) => Delim::pattern(p)
            .map(Some)
            .map_err(|e| format!("{scope}: {what}_pattern: {e}")),
        (None, None) => Ok(None),
    }
}

/// `"{a.b}"` as `["a", "b"]`, for a string that is one placeholder.
fn placeholder(v: &Value) -> Option<Vec<&str>> {
    let s = v.as_str()?.strip_prefix('{')?.strip_suffix('}')?;
    let ok = s
        .split('.')
        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'));
    ok.then(|| s.split('.').collect())
}

/// How a tool-call field gives calls, from its content parser and transform.
fn calls(scope: &str, raw: &RawField, open: Option<&Delim>) -> Result<Calls, String> {
    let groups = open.map(Delim::group_names).unwrap_or_default();
    let unsupported = || format!("{scope}: this tool_calls transform is not supported");
    // Where the transform takes the function's name and arguments from.
    let function = match &raw.transform {
        None => None,
        Some(t) => Some(t.get("function").ok_or_else(unsupported)?),
    };
    let (name_from, args_from) = match function {
        None => (None, None),
        Some(f) if placeholder(f).is_some_and(|p| p == ["content"]) => (None, None),
        Some(f) => {
            let name = f
                .get("name")
                .and_then(placeholder)
                .ok_or_else(unsupported)?;
            let args = f
                .get("arguments")
                .and_then(placeholder)
                .ok_or_else(unsupported)?;
            (Some(name), Some(args))
        }
    };
    let captured = |path: &Option<Vec<&str>>| match path.as_deref() {
        Some([g]) if groups.iter().any(|n| n == g) => Some((*g).to_owned()),
        _ => None,
    };
    let key = |path: &Option<Vec<&str>>, default: &str| -> Result<String, String> {
        match (path.as_deref(), raw.transform_each) {
            (None, _) => Ok(default.to_owned()),
            (Some(["content", k]), false) | (Some([k]), true) => Ok((*k).to_owned()),
            _ => Err(unsupported()),
        }
    };
    let is_content = args_from.as_deref() == Some(&["content"][..]);
    match raw.content.as_str() {
        "json" if is_content => {
            let name = captured(&name_from).ok_or_else(unsupported)?;
            match Dialect::of(&raw.content_args).map_err(|e| format!("{scope}: {e}"))? {
                Some(dialect) => Ok(Calls::Lax { name, dialect }),
                None => Ok(Calls::Raw { name }),
            }
        }
        "json" if Dialect::of(&raw.content_args)?.is_some() => Err(format!(
            "{scope}: string_delims and unquoted_keys are supported where the open pattern \
             captures the name"
        )),
        "json" if raw.content_args.get("name_is_key") == Some(&Value::Bool(true)) => {
            Ok(Calls::Object {
                name: String::new(),
                arguments: String::new(),
            })
        }
        "json" => Ok(Calls::Object {
            name: key(&name_from, "name")?,
            arguments: key(&args_from, "arguments")?,
        }),
        "xml-inline" if is_content => {
            let name = captured(&name_from).ok_or_else(unsupported)?;
            let pattern = raw
                .content_args
                .get("tag_pattern")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{scope}: xml-inline needs a 'tag_pattern'"))?;
            let tag = regex::RegexBuilder::new(pattern)
                .dot_matches_new_line(true)
                .build()
                .map_err(|e| format!("{scope}: tag_pattern: {e}"))?;
            if !tag.capture_names().flatten().any(|n| n == "key") {
                return Err(format!("{scope}: tag_pattern needs a group named 'key'"));
            }
            let wrappers = strings(raw.content_args.get("wrappers"))
                .ok_or_else(|| format!("{scope}: 'wrappers' must list strings"))?;
            let values = match raw.content_args.get("value_parser") {
                None => Values::Raw,
                Some(vp) => match vp.get("name").and_then(Value::as_str).unwrap_or("text") {
                    "text" => Values::Text,
                    "json" => Values::Json,
                    other => {
                        return Err(format!("{scope}: value_parser {other:?} is not supported"));
                    }
                },
            };
            let flag = |key: &str| raw.content_args.get(key) == Some(&Value::Bool(true));
            let closed_only = flag("closed_only");
            let stops = strings(raw.content_args.get("value_stops"))
                .ok_or_else(|| format!("{scope}: 'value_stops' must list strings"))?;
            // Calls sent only once closed are read at the close.
            let parts = match closed_only {
                false => TagParts::of(pattern, &stops),
                true => None,
            };
            Ok(Calls::Tags {
                name,
                tag: Box::new(tag),
                values,
                wrappers,
                closed_only,
                entities: flag("entities"),
                parts,
            })
        }
        "pythonic" => {
            let name = match name_from {
                Some(_) => captured(&name_from).ok_or_else(unsupported)?,
                None if groups.iter().any(|g| g == "name") => "name".to_owned(),
                None => {
                    return Err(format!(
                        "{scope}: pythonic calls need an open pattern capturing 'name'"
                    ));
                }
            };
            let lines = raw.content_args.get("lines") == Some(&Value::Bool(true));
            Ok(Calls::Pythonic { name, lines })
        }
        "xml-tree" if is_content => {
            let name = captured(&name_from).ok_or_else(unsupported)?;
            let marker = raw
                .content_args
                .get("marker")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .ok_or_else(|| format!("{scope}: xml-tree needs a 'marker'"))?;
            Ok(Calls::Tree {
                name,
                marker: marker.to_owned(),
            })
        }
        "reader" => {
            let name = raw.content_args.get("reader").and_then(Value::as_str);
            name.and_then(Reader::of).map(Calls::Reader).ok_or_else(|| {
                format!("{scope}: 'reader' must name a reader (minicpm5, k2_horizon)")
            })
        }
        other => Err(format!(
            "{scope}: tool calls parsed as {other:?} are not supported (json, xml-inline, \
             xml-tree, pythonic or reader)"
        )),
    }
}

impl Template {
    /// Compiles a template from its JSON text; the error says what is wrong with it.
    pub fn from_json(json: &str) -> Result<Template, String> {
        let raw: RawTemplate =
            serde_json::from_str(json).map_err(|e| format!("response_template: {e}"))?;
        if raw.version != 1 {
            return Err(format!(
                "unsupported response_template version: {}",
                raw.version
            ));
        }
        if raw.fields.is_empty() {
            return Err("response_template.fields must be a non-empty object".to_owned());
        }
        if raw.fields.len() > MAX_FIELDS {
            return Err(format!(
                "response_template has {} fields, at most {MAX_FIELDS} are supported",
                raw.fields.len()
            ));
        }
        let anchor = delim(
            "response_template",
            "start_anchor",
            raw.start_anchor.as_ref(),
            raw.start_anchor_pattern.as_deref(),
        )?
        .ok_or("response_template must define 'start_anchor' or 'start_anchor_pattern'")?;
        let mut fields = Vec::new();
        for (name, value) in &raw.fields {
            let scope = format!("field '{name}'");
            let f: RawField =
                serde_json::from_value(value.clone()).map_err(|e| format!("{scope}: {e}"))?;
            if !CONTENT_PARSERS.contains(&f.content.as_str()) {
                return Err(format!(
                    "{scope}: unknown content parser {:?}; known: {}",
                    f.content,
                    CONTENT_PARSERS.join(", ")
                ));
            }
            if f.join.is_some() && !f.repeats {
                return Err(format!("{scope}: 'join' requires 'repeats': true"));
            }
            if f.transform_each && f.transform.is_none() {
                return Err(format!(
                    "{scope}: transform_each is set but no transform was provided"
                ));
            }
            let open = delim(&scope, "open", f.open.as_ref(), f.open_pattern.as_deref())?;
            let close = delim(
                &scope,
                "close",
                f.close.as_ref(),
                f.close_pattern.as_deref(),
            )?;
            let role = match name.as_str() {
                "content" => Role::Content,
                "reasoning_content" | "reasoning" | "thinking" => Role::Reasoning,
                // `tool_calls.X` (our addition): another form of the calls, in the same place
                // (dots.llm1's JSON calls beside its XML ones).
                n if n == "tool_calls" || n.starts_with("tool_calls.") => {
                    Role::Tools(calls(&scope, &f, open.as_ref())?)
                }
                "tool_text" => Role::CallText,
                "tools_block" => Role::CallsOff,
                _ => Role::Other,
            };
            let flag = |key: &str| f.content_args.get(key) == Some(&Value::Bool(true));
            if flag("inline") && (open.is_none() || close.is_some() || !matches!(role, Role::Other))
            {
                return Err(format!(
                    "{scope}: an inline field has an open delimiter, no close, and no role"
                ));
            }
            let (strip, trailing) = match f.content_args.get("strip") {
                None => (true, false),
                Some(Value::Bool(b)) => (*b, false),
                Some(Value::String(s)) if s == "trailing" => (false, true),
                Some(_) => {
                    return Err(format!(
                        "{scope}: 'strip' must be true, false or \"trailing\""
                    ));
                }
            };
            let stop = match f.content_args.get("stop_pattern") {
                None => None,
                Some(Value::String(p)) => {
                    Some(Delim::pattern(p).map_err(|e| format!("{scope}: stop_pattern: {e}"))?)
                }
                Some(_) => return Err(format!("{scope}: 'stop_pattern' must be a string")),
            };
            fields.push(Field {
                name: name.clone(),
                open,
                close,
                role,
                strip,
                trailing,
                lstrip_after: flag("lstrip_after"),
                inline: flag("inline"),
                join: f.join.unwrap_or_default(),
                in_block: flag("in_block"),
                stop,
                collapse: flag("collapse_doubled_names"),
                once: flag("once"),
                ends_with_json: flag("ends_with_json"),
            });
        }
        let implicit: Vec<usize> = (0..fields.len())
            .filter(|&i| fields.get(i).is_some_and(|f| f.open.is_none()))
            .collect();
        if implicit.len() > 1 {
            return Err(
                "at most one field may omit 'open'/'open_pattern' (it takes the text outside \
                 every other field)"
                    .to_owned(),
            );
        }
        let looks_behind = fields
            .iter()
            .flat_map(|f| [f.open.as_ref(), f.close.as_ref()])
            .flatten()
            .any(Delim::looks_behind);
        Ok(Template {
            fields,
            implicit: implicit.first().copied(),
            anchor,
            looks_behind,
        })
    }

    /// Whether some call's arguments are built from its text (tag-form, dialect, element or
    /// reader calls), which the request's tool schemas type.
    pub(crate) fn builds_arguments(&self) -> bool {
        self.fields.iter().any(|f| {
            matches!(
                f.role,
                Role::Tools(
                    Calls::Tags { .. } | Calls::Lax { .. } | Calls::Tree { .. } | Calls::Reader(_)
                )
            )
        })
    }

    /// Whether some call's arguments are raw JSON after a named open delimiter (which
    /// transformers' rules type by the request's tool schemas).
    pub(crate) fn has_raw_arguments(&self) -> bool {
        self.fields
            .iter()
            .any(|f| matches!(f.role, Role::Tools(Calls::Raw { .. })))
    }

    /// Whether a field of this role exists.
    pub(crate) fn has(&self, reasoning: bool) -> bool {
        self.fields.iter().any(|f| match f.role {
            Role::Reasoning => reasoning,
            Role::Tools(_) => !reasoning,
            _ => false,
        })
    }
}
