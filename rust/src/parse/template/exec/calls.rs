//! A region's opening, where a call is counted and its name sent, and a call's course through
//! the executor: whether the text at hand ends it, taking its text, and closing it, where
//! tag-form calls become JSON arguments ([`super::tags`]).

use super::tags::{self, Reading, TagCall};
use super::*;

impl TemplateState {
    /// Opens field `field`'s region (its open delimiter matched `text`, with these captures).
    pub(super) fn open(
        &mut self,
        t: &Template,
        k: Knobs<'_>,
        field: usize,
        caps: &[(String, String)],
        text: &str,
        out: &mut Delta,
    ) {
        let Some(f) = t.fields.get(field) else {
            return;
        };
        self.reset();
        self.current = u8::try_from(field).ok();
        self.opened = true;
        self.lstrip |= f.lstrip_after;
        let Role::Tools(calls) = &f.role else {
            return;
        };
        match calls {
            // Read when the region closes (`read_closed_json`).
            Calls::Object { .. } if k.hf => {}
            Calls::Raw { name } if k.hf => {
                let name = caps
                    .iter()
                    .find(|(g, _)| g == name)
                    .map(|(_, v)| v.as_str());
                self.name = name.unwrap_or_default().to_owned();
            }
            Calls::Object { .. } => self.scan = Some(Scan::default()),
            Calls::Pythonic { name, lines } => {
                self.py = Some(Py::new(*lines));
                let name = caps.iter().find(|(g, _)| g == name).map(|(_, v)| v.clone());
                self.list_event(k, Event::Name(name.unwrap_or_default()), out);
            }
            Calls::Reader(_) => self.body.push_str(text),
            Calls::Tags {
                name,
                closed_only: true,
                entities,
                ..
            } => {
                // Counted and sent when the call closes (`close`).
                let name = caps
                    .iter()
                    .find(|(g, _)| g == name)
                    .map(|(_, v)| v.as_str());
                self.name = match (name, entities) {
                    (Some(n), true) => typed::unescape_entities(n),
                    (n, _) => n.unwrap_or_default().to_owned(),
                };
                if f.collapse
                    && let Some(collapsed) = k.request.and_then(|r| typed::collapsed(r, &self.name))
                {
                    self.name = collapsed;
                }
            }
            Calls::Raw { name }
            | Calls::Lax { name, .. }
            | Calls::Tags { name, .. }
            | Calls::Tree { name, .. } => {
                if matches!(calls, Calls::Raw { .. }) {
                    self.args = Args::after_open(text);
                }
                self.calls = self.calls.saturating_add(1);
                let name = caps
                    .iter()
                    .find(|(g, _)| g == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                if !matches!(calls, Calls::Raw { .. }) && k.request.is_some() {
                    self.name.clone_from(&name);
                } else if k.typing == Typing::Transformers && k.request.is_some() {
                    // Raw JSON arguments are typed as `parse_response(..., tools=...)` types
                    // them where the request declares the tool's properties: they are then
                    // kept until the call closes.
                    self.name.clone_from(&name);
                    if self.schema(k).is_none() {
                        self.name.clear();
                    }
                }
                if k.rules.parallel || self.calls == 1 {
                    out.start_call(self.calls - 1, name);
                }
            }
        }
    }

    /// Whether the open region is a call whose JSON is whole at `pos` (or is with the char
    /// there): a raw call's arguments and the object its open began, or a JSON calls region
    /// without a close delimiter.
    pub(super) fn call_ends(&self, t: &Template, k: Knobs<'_>, buf: &str, pos: usize) -> bool {
        let Some(f) = self.current.and_then(|c| t.fields.get(usize::from(c))) else {
            return false;
        };
        if k.hf
            && matches!(
                f.role,
                Role::Tools(Calls::Object { .. } | Calls::Raw { .. })
            )
        {
            return false;
        }
        match &f.role {
            Role::Tools(Calls::Raw { .. }) => {
                self.args.ended()
                    || buf
                        .get(pos..)
                        .and_then(|r| r.chars().next())
                        .is_some_and(|c| self.args.ends_with(c))
            }
            Role::Tools(Calls::Object { .. }) if f.close.is_none() || f.ends_with_json => {
                self.scan.as_ref().is_some_and(Scan::done)
            }
            Role::Tools(Calls::Pythonic { .. }) => self.py.as_ref().is_some_and(Py::done),
            _ => false,
        }
    }

    /// Ends a call whose JSON is whole at `pos`: its close delimiter, if it comes next (after
    /// whitespace, or from the char that ends the call), is taken; otherwise the region ends
    /// there and the text after it is outside every region.
    pub(super) fn end_call(
        &mut self,
        t: &Template,
        k: Knobs<'_>,
        buf: &str,
        mut pos: usize,
        eos: bool,
        out: &mut Delta,
    ) -> CallEnd {
        let close = self
            .current
            .and_then(|c| t.fields.get(usize::from(c)))
            .and_then(|f| f.close.as_ref());
        let last = buf
            .get(pos..)
            .and_then(|r| r.chars().next())
            .filter(|&c| self.args.ends_with(c));
        if let Some(c) = last {
            match close.map(|d| d.find(buf, pos, eos)) {
                Some(Found::Match(s, e)) if s == pos => {
                    self.close_call(t, k, out);
                    return CallEnd::At(e);
                }
                Some(Found::Pending(s)) if s == pos && buf.len() - pos <= MAX_HELD => {
                    return CallEnd::Hold(pos);
                }
                _ => {}
            }
            self.args.take_last();
            pos += c.len_utf8();
        }
        let rest = buf.get(pos..).unwrap_or_default();
        let gap = rest.len() - rest.trim_start_matches(py_space).len();
        if let Some(d) = close {
            match d.find(buf, pos, eos) {
                Found::Match(s, e) if s <= pos + gap => {
                    self.close_call(t, k, out);
                    return CallEnd::At(e);
                }
                Found::Pending(s) if s <= pos + gap && rest.len() <= MAX_HELD => {
                    return CallEnd::Hold(pos);
                }
                _ if gap == rest.len() && !eos && gap <= MAX_SPACE => return CallEnd::Hold(pos),
                _ => {}
            }
        }
        self.close_call(t, k, out);
        CallEnd::At(pos)
    }

    /// Closes the call its JSON ended; the text after it is the call block's, up to the next
    /// call, where the template has one (`tool_text`).
    fn close_call(&mut self, t: &Template, k: Knobs<'_>, out: &mut Delta) {
        self.close(t, k, out);
        if k.on(&Role::CallText)
            && let Some(i) = t
                .fields
                .iter()
                .position(|f| matches!(f.role, Role::CallText))
        {
            self.open(t, k, i, &[], "", out);
        }
    }

    /// Text inside the open region, up to where a call's JSON is whole; returns the bytes
    /// taken (text of the call after its arguments is taken and dropped).
    pub(super) fn take(
        &mut self,
        t: &Template,
        k: Knobs<'_>,
        text: &str,
        out: &mut Delta,
    ) -> usize {
        let Some(f) = self.current.and_then(|c| t.fields.get(usize::from(c))) else {
            self.accumulate(t, k, text, out);
            return text.len();
        };
        match &f.role {
            Role::Tools(Calls::Raw { .. }) if self.args.tracked() && !k.hf => {
                let mut args = 0;
                let mut taken = text.len();
                for (i, c) in text.char_indices() {
                    let step = self.args.step(c);
                    if !self.args.tracked() {
                        // Not JSON from `c` on: the arguments so far, then the rest as
                        // written. Text of the call after its arguments, before `c`, stays
                        // dropped, wherever the text was cut.
                        self.accumulate(t, k, text.get(..args).unwrap_or_default(), out);
                        self.accumulate(t, k, text.get(i..).unwrap_or_default(), out);
                        return text.len();
                    }
                    match step {
                        Step::Arguments => args = i + c.len_utf8(),
                        Step::Call => {}
                        Step::Last | Step::After => {
                            taken = i;
                            break;
                        }
                    }
                }
                self.accumulate(t, k, text.get(..args).unwrap_or_default(), out);
                taken
            }
            Role::Tools(Calls::Object { name, arguments })
                if (f.close.is_none() || f.ends_with_json) && !k.hf =>
            {
                if text.is_empty() {
                    return 0;
                }
                self.opened = true;
                let scan = self.scan.get_or_insert_with(Scan::default);
                let mut sink = Sink::keyed(&mut self.calls, k.rules, out, name, arguments);
                scan.feed_until_done(text, &mut sink)
            }
            Role::Tools(Calls::Pythonic { .. }) => {
                if text.is_empty() {
                    return 0;
                }
                self.opened = true;
                self.feed_list(k, text, out)
            }
            _ => {
                self.accumulate(t, k, text, out);
                text.len()
            }
        }
    }

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
                        let mut arguments = dialect.to_json(py_strip(&self.body));
                        if let (Some(props), Some(Val::Dict(mut pairs))) =
                            (self.schema(k), typed::loads(&arguments))
                            && typed::type_args(k.typing, &mut pairs, &props)
                        {
                            arguments = typed::dump_args(&pairs);
                        }
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
                        let mut arguments = py_strip(&self.body).to_owned();
                        if let (Some(props), Some(Val::Dict(mut pairs))) =
                            (self.schema(k), typed::loads(&arguments))
                            && typed::type_args(k.typing, &mut pairs, &props)
                        {
                            arguments = typed::dump_args(&pairs);
                        }
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

    /// Sends the rest of the open tag-form call's arguments, and their close, where the call's
    /// close delimiter begins at `at` and more text can only make it longer (a close pattern
    /// ending in `\s*` waits for the text after it): the call's arguments are whole there.
    pub(super) fn end_arguments_early(
        &mut self,
        t: &Template,
        k: Knobs<'_>,
        buf: &str,
        at: usize,
        out: &mut Delta,
    ) {
        if self.ended_args || self.kept {
            return;
        }
        let Some(f) = self.current.and_then(|c| t.fields.get(usize::from(c))) else {
            return;
        };
        let (Role::Tools(calls @ Calls::Tags { .. }), Some(close)) = (&f.role, f.close.as_ref())
        else {
            return;
        };
        let Some(call) = TagCall::of(calls, k.typing) else {
            return;
        };
        let rest = buf.get(at..).unwrap_or_default();
        let begins = |text: &str| close.regex().find(text).is_some_and(|m| m.start() == 0);
        // A match now, and with any text after it (one that an end anchor or a word boundary
        // would take back is not certain).
        if !rest.is_empty() && begins(rest) && begins(&format!("{rest}\u{0}")) {
            self.read_tags(call, k, true, out);
            self.ended_args = true;
        }
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

    /// The properties the request's schema gives the open call's tool.
    pub(super) fn schema(
        &self,
        k: Knobs<'_>,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        k.request
            .filter(|_| !self.name.is_empty())
            .and_then(|r| typed::properties(r, &self.name))
    }

    /// Text inside the open region.
    pub(super) fn accumulate(&mut self, t: &Template, k: Knobs<'_>, text: &str, out: &mut Delta) {
        if text.is_empty() {
            return;
        }
        let Some(index) = self.field_index(t) else {
            return;
        };
        let Some(f) = t.fields.get(index) else {
            return;
        };
        self.opened = true;
        match &f.role {
            Role::Other | Role::CallText | Role::CallsOff => {}
            Role::Tools(Calls::Object { .. } | Calls::Raw { .. }) if k.hf => self.keep_body(text),
            Role::Tools(Calls::Object { name, arguments }) => {
                let scan = self.scan.get_or_insert_with(Scan::default);
                let mut sink = Sink::keyed(&mut self.calls, k.rules, out, name, arguments);
                scan.feed(text, &mut sink);
            }
            Role::Tools(calls @ Calls::Tags { .. })
                if let Some(call) = TagCall::of(calls, k.typing)
                    && !self.kept =>
            {
                self.keep_body(text);
                self.read_tags(call, k, false, out);
            }
            Role::Tools(
                Calls::Tags { .. } | Calls::Lax { .. } | Calls::Tree { .. } | Calls::Reader(_),
            ) => {
                self.keep_body(text);
            }
            Role::Tools(Calls::Pythonic { .. }) => {
                self.feed_list(k, text, out);
            }
            Role::Tools(Calls::Raw { .. }) if !self.name.is_empty() => {
                self.keep_body(text);
            }
            Role::Tools(Calls::Raw { .. }) | Role::Content | Role::Reasoning => {
                if matches!(f.role, Role::Content) && !self.texted && !self.carry.is_empty() {
                    let carried = std::mem::take(&mut self.carry);
                    self.space.insert_str(0, &carried);
                }
                let muted = !k.rules.parallel && self.calls > 1;
                let bit = 1u32 << (index % 32);
                let text = match self.lstrip && matches!(f.role, Role::Content | Role::Reasoning) {
                    true => {
                        let rest = text.trim_start_matches(py_space);
                        self.lstrip = rest.is_empty();
                        rest
                    }
                    false => text,
                };
                let text = if k.content_lstrip_newlines
                    && matches!(f.role, Role::Content)
                    && !self.texted
                    && self.space.is_empty()
                    && self.sent & bit == 0
                {
                    text.trim_start_matches('\n')
                } else {
                    text
                };
                let strip = match (k.vllm_space, &f.role) {
                    _ if k.hf => Strip::None,
                    (Some(_), Role::Content) => Strip::Lead,
                    (Some(false), Role::Reasoning) => Strip::None,
                    (Some(true), Role::Reasoning) => Strip::Trailing,
                    _ if f.strip => Strip::Both,
                    _ if f.trailing => Strip::Trailing,
                    _ => Strip::None,
                };
                let region = text::Region {
                    index,
                    strip,
                    join: &f.join,
                    role: &f.role,
                    muted,
                };
                self.text(region, text, out);
            }
        }
    }

    /// Text of a Python call list, up to where the list ends; returns the bytes taken.
    pub(super) fn feed_list(&mut self, k: Knobs<'_>, text: &str, out: &mut Delta) -> usize {
        let py = self.py.get_or_insert_with(Py::default);
        let calls = &mut self.calls;
        py.feed(text, &mut |e| list_event(calls, k, e, out))
    }

    pub(super) fn list_event(&mut self, k: Knobs<'_>, e: Event, out: &mut Delta) {
        list_event(&mut self.calls, k, e, out);
    }

    /// Keeps a built call's text, up to [`MAX_BODY`] bytes.
    pub(super) fn keep_body(&mut self, text: &str) {
        let room = MAX_BODY.saturating_sub(self.body.len());
        let take = floor_boundary(text, room.min(text.len()));
        self.body.push_str(text.get(..take).unwrap_or_default());
    }
}
