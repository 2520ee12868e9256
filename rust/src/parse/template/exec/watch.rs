//! Which delimiter the text at hand meets first: the open region's close (and its stop), the
//! opens that end it (a call's open ending reasoning, a call's open inside its block's text,
//! inline matches in text), or, outside every region, every field's open and the implicit
//! field's close.

use super::*;

impl TemplateState {
    /// The delimiter to act on now, if any: `(field, is_open, start, end)`; and where the text
    /// that must be held starts.
    pub(super) fn watch(
        &self,
        t: &Template,
        k: Knobs<'_>,
        buf: &str,
        pos: usize,
        eos: bool,
        no_empty: bool,
    ) -> (Option<(usize, bool, usize, usize)>, usize) {
        let mut hold = buf.len();
        let mut best: Option<(usize, bool, usize, usize)> = None;
        // `lead`: a match that does not begin with it is passed over (the next one counts);
        // `zero`: a match counts as the empty text where it starts.
        let mut consider = |field: usize, open: bool, d: &Delim, name: &str, lead: &str, zero| {
            match d.find_led(buf, pos, eos, lead) {
                Found::None => {}
                Found::Pending(s) => hold = hold.min(s),
                Found::Match(s, e) => {
                    let e = if zero { s } else { e };
                    // An empty close of a region that has had nothing closes nothing.
                    if s == e && ((!open && !self.opened) || no_empty) {
                        return;
                    }
                    let better = match best {
                        None => true,
                        Some((bf, bo, bs, be)) => {
                            let key = (s, std::cmp::Reverse(e - s), !open);
                            let bname = t.fields.get(bf).map_or("", |f| f.name.as_str());
                            let bkey = (bs, std::cmp::Reverse(be - bs), !bo);
                            key < bkey || (key == bkey && name < bname)
                        }
                    };
                    if better {
                        best = Some((field, open, s, e));
                    }
                }
            }
        };
        match self.current {
            Some(c) => {
                let c = usize::from(c);
                // A Python call list's close is taken only where the list ends (`end_call`).
                if let Some((f, d)) = t
                    .fields
                    .get(c)
                    .filter(|f| !matches!(f.role, Role::Tools(Calls::Pythonic { .. })))
                    .and_then(|f| Some((f, f.close.as_ref()?)))
                {
                    consider(c, false, d, &f.name, "", false);
                }
                // A call's stop ends it where the stop begins (`stopped`).
                if let Some((f, d)) = t.fields.get(c).and_then(|f| Some((f, f.stop.as_ref()?))) {
                    consider(c, false, d, &f.name, "", true);
                }
                // A call's open ends reasoning, where the reasoning parser's name says so.
                if k.calls_end_reasoning
                    && t.fields
                        .get(c)
                        .is_some_and(|f| matches!(f.role, Role::Reasoning))
                {
                    for (i, f) in t.fields.iter().enumerate() {
                        let Some(d) = f.open.as_ref().filter(|_| matches!(f.role, Role::Tools(_)))
                        else {
                            // A call block's marker ends it too, where calls are parsed and
                            // the marker begins with the lead (text may come before the call).
                            if let (Some(d), Some(lead)) = (
                                f.open
                                    .as_ref()
                                    .filter(|_| matches!(f.role, Role::CallText) && k.on(&f.role)),
                                k.reasoning_call_lead,
                            ) {
                                consider(i, true, d, &f.name, lead, false);
                            }
                            continue;
                        };
                        match k.reasoning_call_lead {
                            Some(lead) if !k.on(&f.role) => {
                                // Calls off, the block's marker still ends reasoning: the block
                                // is content text.
                                let name = t.fields.get(c).map_or("", |r| r.name.as_str());
                                consider(c, false, d, name, lead, true);
                            }
                            lead if k.on(&f.role) => {
                                consider(i, true, d, &f.name, lead.unwrap_or_default(), false);
                            }
                            _ => {}
                        }
                    }
                }
                // Inside a call block's text, a call's open ends it (and opens the call).
                if t.fields
                    .get(c)
                    .is_some_and(|f| matches!(f.role, Role::CallText))
                {
                    for (i, f) in t.fields.iter().enumerate() {
                        if let Some(d) = f
                            .open
                            .as_ref()
                            .filter(|_| matches!(f.role, Role::Tools(_)) && k.on(&f.role))
                        {
                            consider(i, true, d, &f.name, "", false);
                        }
                    }
                }
                // Inline matches are dropped inside a text region too.
                if t.fields
                    .get(c)
                    .is_some_and(|f| matches!(f.role, Role::Content | Role::Reasoning))
                {
                    for (i, f) in t.fields.iter().enumerate().filter(|(_, f)| f.inline) {
                        if let Some(d) = f.open.as_ref() {
                            consider(i, true, d, &f.name, "", false);
                        }
                    }
                }
                // A region the request opened drops its open delimiter where the text begins.
                if let Some((f, d)) = t
                    .fields
                    .get(c)
                    .and_then(|f| Some((f, f.open.as_ref()?)))
                    .filter(|_| self.fresh && !self.texted)
                {
                    consider(c, true, d, &f.name, "", false);
                }
            }
            None => {
                for (i, f) in t.fields.iter().enumerate() {
                    let over =
                        (k.reasoning_once && self.reasoned && matches!(f.role, Role::Reasoning))
                            || (f.once && self.once_done);
                    if let Some(d) = f
                        .open
                        .as_ref()
                        .filter(|_| k.on(&f.role) && !over && !f.in_block)
                    {
                        consider(i, true, d, &f.name, "", false);
                    }
                }
                if let Some((i, f, d)) = t
                    .implicit
                    .and_then(|i| Some((i, t.fields.get(i)?)))
                    .and_then(|(i, f)| Some((i, f, f.close.as_ref()?)))
                {
                    consider(i, false, d, &f.name, "", false);
                }
            }
        }
        (best.filter(|b| b.2 < hold), hold)
    }

    /// Whether the open call's stop matches at `at` (its region ends there without its close).
    pub(super) fn stopped(&self, t: &Template, buf: &str, at: usize, eos: bool) -> bool {
        self.current
            .and_then(|c| t.fields.get(usize::from(c)))
            .and_then(|f| f.stop.as_ref())
            .is_some_and(|d| matches!(d.find(buf, at, eos), Found::Match(s, _) if s == at))
    }
}
