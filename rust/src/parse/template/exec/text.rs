//! A text-like region's text: stripped as its field says, joined to what the region sent
//! before, and routed to content, reasoning or the open call's arguments.

use super::*;

/// The region a text belongs to: its field's index, how its text is stripped and joined, its
/// role, and whether its call's arguments are muted.
pub(super) struct Region<'f> {
    pub index: usize,
    pub strip: Strip,
    pub join: &'f str,
    pub role: &'f Role,
    pub muted: bool,
}

impl TemplateState {
    /// Text of a text-like region, stripped as `strip` says (leading whitespace dropped,
    /// trailing whitespace held until more text follows).
    pub(super) fn text(&mut self, region: Region<'_>, text: &str, out: &mut Delta) {
        let Region {
            index,
            strip,
            join,
            role,
            muted,
        } = region;
        let (body, trailing) = match strip {
            Strip::None => (text, ""),
            Strip::Lead if self.texted => (text, ""),
            Strip::Lead => {
                let kept = text.trim_start_matches(py_space);
                let lead = text.get(..text.len() - kept.len()).unwrap_or_default();
                if kept.is_empty() {
                    (kept, lead)
                } else {
                    self.space.push_str(lead);
                    (kept, "")
                }
            }
            Strip::Both | Strip::Trailing => {
                let body = if self.texted || strip == Strip::Trailing {
                    text
                } else {
                    text.trim_start_matches(py_space)
                };
                let kept = body.trim_end_matches(py_space);
                (kept, body.get(kept.len()..).unwrap_or_default())
            }
        };
        if !body.is_empty() {
            let bit = 1u32 << (index % 32);
            let mut piece = String::new();
            if !self.texted && self.sent & bit != 0 {
                piece.push_str(join);
            }
            piece.push_str(&std::mem::take(&mut self.space));
            piece.push_str(body);
            self.texted = true;
            self.sent |= bit;
            match role {
                Role::Content => out.content.push_str(&piece),
                Role::Reasoning => out.reasoning.push_str(&piece),
                Role::Tools(_) => {
                    if !muted {
                        out.push_arguments(self.calls.saturating_sub(1), &piece);
                    }
                }
                Role::Other | Role::CallText | Role::CallsOff => {}
            }
        }
        let holds = self.texted || matches!(strip, Strip::Trailing | Strip::Lead);
        if holds && !trailing.is_empty() {
            if self.space.len() + trailing.len() > MAX_SPACE {
                let flush = std::mem::take(&mut self.space) + trailing;
                match role {
                    Role::Content => out.content.push_str(&flush),
                    Role::Reasoning => out.reasoning.push_str(&flush),
                    Role::Tools(_) if !muted => {
                        out.push_arguments(self.calls.saturating_sub(1), &flush);
                    }
                    _ => {}
                }
            } else {
                self.space.push_str(trailing);
            }
        }
    }
}
