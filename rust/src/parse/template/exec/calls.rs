//! A region's opening, where a call is counted and its name sent, and a call's course through
//! the executor: whether the text at hand ends it, and taking its text, where tag-form calls
//! send their arguments as they come ([`super::tags`]). [`super::close`] closes the region.

use super::tags::TagCall;
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
