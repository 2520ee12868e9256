//! A region's close: a call's kept text read into its arguments (built, tag by tag, or by a
//! reader), or sent as content where it does not read as calls or the output cut it.

use super::tags::{self, Reading, TagCall};
use super::*;

impl TemplateState {
    /// Closes the open region (its close delimiter matched, or the output ended).
    pub(super) fn close(&mut self, t: &Template, k: Knobs<'_>, out: &mut Delta) {
        if self.opened {
            if let Some(Role::Tools(calls)) = self
                .field_index(t)
                .and_then(|i| t.fields.get(i))
                .map(|f| &f.role)
            {
                match calls {
                    Calls::Object { .. } | Calls::Raw { .. } if k.hf => {
                        self.read_closed_json(calls, k, out);
                    }
                    Calls::Object { name, arguments } => {
                        if let Some(scan) = self.scan.as_mut() {
                            let mut sink =
                                Sink::keyed(&mut self.calls, k.rules, out, name, arguments);
                            scan.close(&mut sink);
                            // A sent call that had no arguments value gets `{}`.
                            if scan.sent_without_arguments() {
                                sink.push_arguments("{}");
                            }
                        }
                    }
                    Calls::Tags {
                        closed_only: true, ..
                    } if self.name.is_empty() => {}
                    Calls::Tags { .. } if self.ended_args => {}
                    Calls::Tags { .. } => {
                        if let Some(call) = TagCall::of(calls, k.typing)
                            && !self.kept
                        {
                            self.read_tags(call, k, true, out);
                        }
                        // Not sent tag by tag, or kept at its first key.
                        if TagCall::of(calls, k.typing).is_none() || self.kept {
                            self.close_tags(calls, k, out);
                        }
                    }
                    Calls::Lax { dialect, .. } if dialect.bare_strings => {
                        let mut pairs = dialect.pairs(&self.body);
                        if let Some(props) = self.schema(k) {
                            typed::type_args(k.typing, &mut pairs, &props);
                        }
                        if k.rules.parallel || self.calls == 1 {
                            out.push_arguments(
                                self.calls.saturating_sub(1),
                                &typed::dump_args(&pairs),
                            );
                        }
                    }
                    Calls::Lax { dialect, .. } => {
                        let arguments = self.typed_json(k, dialect.to_json(py_strip(&self.body)));
                        if k.rules.parallel || self.calls == 1 {
                            out.push_arguments(self.calls.saturating_sub(1), &arguments);
                        }
                    }
                    Calls::Tree { marker, .. } => {
                        let props = self.schema(k);
                        let mut pairs = tree::arguments(&self.body, marker, props.as_ref());
                        if let Some(props) = props {
                            typed::type_args(k.typing, &mut pairs, &props);
                        }
                        if k.rules.parallel || self.calls == 1 {
                            out.push_arguments(
                                self.calls.saturating_sub(1),
                                &typed::dump_args(&pairs),
                            );
                        }
                    }
                    // Read where it closed (`read_region`), or made content where cut (`cut`).
                    Calls::Reader(_) => {}
                    Calls::Raw { .. } if !self.name.is_empty() => {
                        let arguments = self.typed_json(k, py_strip(&self.body).to_owned());
                        if k.rules.parallel || self.calls == 1 {
                            out.push_arguments(self.calls.saturating_sub(1), &arguments);
                        }
                    }
                    // A call whose arguments never came has none: `{}`, as vLLM's whole
                    // answers give it.
                    Calls::Raw { .. } if !self.args.begun() => {
                        if k.rules.parallel || self.calls == 1 {
                            out.push_arguments(self.calls.saturating_sub(1), "{}");
                        }
                    }
                    Calls::Raw { .. } => {}
                    Calls::Pythonic { .. } => {
                        if let Some(mut py) = self.py.take() {
                            let calls = &mut self.calls;
                            py.finish(&mut |e| list_event(calls, k, e, out));
                        }
                    }
                }
            }
        }
        self.reset();
    }

    /// Sends a tag-form call's arguments, read from its whole text.
    fn close_tags(&mut self, calls: &Calls, k: Knobs<'_>, out: &mut Delta) {
        let Calls::Tags {
            tag,
            values,
            wrappers,
            closed_only,
            entities,
            ..
        } = calls
        else {
            return;
        };
        let props = self.schema(k);
        let reading = Reading {
            values: *values,
            typing: k.typing,
            entities: *entities,
        };
        let arguments = tags::tags_to_json(tag, reading, wrappers, &self.body, props.as_ref());
        if *closed_only {
            self.calls = self.calls.saturating_add(1);
            if k.rules.parallel || self.calls == 1 {
                out.start_call(self.calls - 1, self.name.clone());
            }
        }
        if k.rules.parallel || self.calls == 1 {
            out.push_arguments(self.calls.saturating_sub(1), &arguments);
        }
    }

    /// Reads a JSON calls region as vLLM's `hf` parser reads it when it closes: its text as
    /// JSON (an object, or a list of them, each a call by the field's keys: a non-empty string
    /// name, arguments not null, none given `{}`), or, after a named open delimiter, the
    /// arguments; string-valued arguments as they are, others typed by the tool's schema by
    /// transformers' rules and written as Python writes them. A region that does not read so
    /// is dropped, all of it.
    fn read_closed_json(&mut self, calls: &Calls, k: Knobs<'_>, out: &mut Delta) {
        let body = std::mem::take(&mut self.body);
        let Some(value) = typed::loads(py_strip(&body)) else {
            return;
        };
        let arguments = |name: &str, v: Val| -> Option<String> {
            match v {
                Val::Null => None,
                Val::Str(s) => Some(s),
                Val::Dict(mut pairs) => {
                    if let Some(props) = k.request.and_then(|r| typed::properties(r, name)) {
                        typed::type_args(Typing::Transformers, &mut pairs, &props);
                    }
                    Some(typed::dump_args(&pairs))
                }
                other => {
                    let mut s = String::new();
                    typed::dump(&other, &mut s);
                    Some(s)
                }
            }
        };
        let read: Option<Vec<(String, String)>> = match calls {
            Calls::Raw { .. } => {
                let name = std::mem::take(&mut self.name);
                (!name.is_empty())
                    .then(|| arguments(&name, value).map(|a| vec![(name, a)]))
                    .flatten()
            }
            Calls::Object {
                name,
                arguments: key,
            } => {
                let items = match value {
                    Val::List(items) => items,
                    one => vec![one],
                };
                items
                    .into_iter()
                    .map(|item| {
                        let Val::Dict(mut pairs) = item else {
                            return None;
                        };
                        let (n, a) = if name.is_empty() {
                            // Each object's one key is the name, its value the arguments.
                            match pairs.len() {
                                1 => pairs.pop()?,
                                _ => return None,
                            }
                        } else {
                            let take = |pairs: &mut Vec<(String, Val)>, key: &str| {
                                let i = pairs.iter().position(|(k, _)| k == key)?;
                                Some(pairs.remove(i).1)
                            };
                            let Some(Val::Str(n)) = take(&mut pairs, name) else {
                                return None;
                            };
                            let a = take(&mut pairs, key).unwrap_or(Val::Dict(Vec::new()));
                            (n, a)
                        };
                        if n.is_empty() {
                            return None;
                        }
                        let a = arguments(&n, a)?;
                        Some((n, a))
                    })
                    .collect()
            }
            _ => None,
        };
        for (name, args) in read.unwrap_or_default() {
            self.calls = self.calls.saturating_add(1);
            if k.rules.parallel || self.calls == 1 {
                out.start_call(self.calls - 1, name);
                out.push_arguments(self.calls - 1, &args);
            }
        }
    }

    /// A call's JSON arguments text typed by the open call's schema, where it is an object
    /// the schema changes; else as it is.
    fn typed_json(&self, k: Knobs<'_>, arguments: String) -> String {
        if let (Some(props), Some(Val::Dict(mut pairs))) =
            (self.schema(k), typed::loads(&arguments))
            && typed::type_args(k.typing, &mut pairs, &props)
        {
            return typed::dump_args(&pairs);
        }
        arguments
    }

    /// Drops the open call where the output cut it (or its stop ended it) and its calls are
    /// sent only once closed; a region a reader reads is content then.
    pub(super) fn cut(&mut self, t: &Template, k: Knobs<'_>, out: &mut Delta) {
        match self
            .field_index(t)
            .and_then(|i| t.fields.get(i))
            .map(|f| &f.role)
        {
            Some(Role::Tools(Calls::Tags {
                closed_only: true, ..
            })) => self.name.clear(),
            Some(Role::Tools(Calls::Reader(_))) => {
                let text = std::mem::take(&mut self.body);
                self.as_content(t, k, &text, out);
            }
            _ => {}
        }
    }

    /// Reads the region a reader reads, its close delimiter's text `close` with it: its calls
    /// are sent, or its text is content.
    pub(super) fn read_region(&mut self, t: &Template, k: Knobs<'_>, close: &str, out: &mut Delta) {
        let Some(f) = self.field_index(t).and_then(|i| t.fields.get(i)) else {
            return;
        };
        let Role::Tools(Calls::Reader(reader)) = f.role else {
            return;
        };
        self.once_done |= f.once;
        self.keep_body(close);
        let text = std::mem::take(&mut self.body);
        match reader.read(&text, k.request) {
            Some(calls) => {
                for (name, arguments) in calls {
                    self.calls = self.calls.saturating_add(1);
                    if k.rules.parallel || self.calls == 1 {
                        out.start_call(self.calls - 1, name);
                        out.push_arguments(self.calls - 1, &arguments);
                    }
                }
            }
            None => self.as_content(t, k, &text, out),
        }
    }

    /// Text sent as the implicit field's, from the open region's place.
    fn as_content(&mut self, t: &Template, k: Knobs<'_>, text: &str, out: &mut Delta) {
        self.reset();
        self.accumulate(t, k, text, out);
    }
}
