//! A strict reader of the small XML documents a model writes as a call (`<function
//! name="f"><param name="k">v</param></function>`): elements, quoted attributes, text with the
//! five named entities and character references, CDATA sections and comments. A document that
//! an XML parser would refuse (a tag not closed in order, an unquoted or repeated attribute, a
//! bare `<` or `&`, an unknown entity, `]]>` in text, two roots) is `None`, and so is one
//! nested deeper than [`MAX_DEPTH`] (libxml2's own bound). Linear in the text.

/// How deep elements nest.
pub(crate) const MAX_DEPTH: usize = 256;

/// An element: its name, its attributes in order, the text before its first child (entities
/// and CDATA read), and its child elements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    /// The value of attribute `name`, if given.
    pub(crate) fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first child element named `name`.
    pub(crate) fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }
}

fn name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == ':' || !c.is_ascii()
}

fn name_char(c: char) -> bool {
    name_start(c) || c.is_ascii_digit() || c == '-' || c == '.'
}

fn xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// A cursor over the document.
struct Cur<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Cur<'a> {
    fn rest(&self) -> &'a str {
        self.s.get(self.at..).unwrap_or_default()
    }

    fn eat(&mut self, lit: &str) -> bool {
        let ok = self.rest().starts_with(lit);
        if ok {
            self.at += lit.len();
        }
        ok
    }

    fn skip_space(&mut self) -> bool {
        let rest = self.rest();
        let n = rest.len() - rest.trim_start_matches(xml_space).len();
        self.at += n;
        n > 0
    }

    fn name(&mut self) -> Option<String> {
        let rest = self.rest();
        let mut chars = rest.char_indices();
        let (_, first) = chars.next()?;
        if !name_start(first) {
            return None;
        }
        let end = chars
            .find(|&(_, c)| !name_char(c))
            .map_or(rest.len(), |(i, _)| i);
        self.at += end;
        Some(rest.get(..end)?.to_owned())
    }

    /// A reference after its `&`, read into `out`.
    fn reference(&mut self, out: &mut String) -> Option<()> {
        let rest = self.rest();
        let semi = rest.find(';')?;
        let body = rest.get(..semi)?;
        let c = match body {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let n = match body.strip_prefix("#x") {
                    Some(hex) if !hex.is_empty() => u32::from_str_radix(hex, 16).ok()?,
                    _ => {
                        let dec = body.strip_prefix('#')?;
                        if dec.is_empty() || !dec.bytes().all(|b| b.is_ascii_digit()) {
                            return None;
                        }
                        dec.parse().ok()?
                    }
                };
                let c = char::from_u32(n)?;
                let allowed =
                    matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && !matches!(n, 0xFFFE | 0xFFFF));
                allowed.then_some(c)?
            }
        };
        out.push(c);
        self.at += semi + 1;
        Some(())
    }

    /// `name="value"` pairs up to the tag's end; whether it closes itself (`/>`).
    fn attrs(&mut self, into: &mut Vec<(String, String)>) -> Option<bool> {
        loop {
            let spaced = self.skip_space();
            if self.eat("/>") {
                return Some(true);
            }
            if self.eat(">") {
                return Some(false);
            }
            if !spaced {
                return None;
            }
            let name = self.name()?;
            self.skip_space();
            if !self.eat("=") {
                return None;
            }
            self.skip_space();
            let quote = self
                .rest()
                .chars()
                .next()
                .filter(|&q| q == '"' || q == '\'')?;
            self.at += 1;
            let mut value = String::new();
            loop {
                let c = self.rest().chars().next()?;
                self.at += c.len_utf8();
                match c {
                    c if c == quote => break,
                    '<' => return None,
                    '&' => self.reference(&mut value)?,
                    // Attribute values normalize whitespace to spaces.
                    '\t' | '\n' | '\r' => value.push(' '),
                    c => value.push(c),
                }
            }
            if into.iter().any(|(k, _)| *k == name) {
                return None;
            }
            into.push((name, value));
        }
    }

    /// Skips a comment after its `<!--`.
    fn comment(&mut self) -> Option<()> {
        let end = self.rest().find("--")?;
        self.at += end;
        self.eat("-->").then_some(())
    }
}

/// The document's root element, if the text is a well-formed document of one.
pub(crate) fn parse(doc: &str) -> Option<Element> {
    let mut cur = Cur { s: doc, at: 0 };
    // Before the root: whitespace and comments.
    loop {
        cur.skip_space();
        if !cur.eat("<!--") {
            break;
        }
        cur.comment()?;
    }
    if !cur.eat("<") {
        return None;
    }
    let mut stack: Vec<(Element, bool)> = Vec::new();
    let mut root = None;
    // Reads a start tag after its `<`; returns the element if it closed itself.
    let start = |cur: &mut Cur<'_>, stack: &mut Vec<(Element, bool)>| -> Option<Option<Element>> {
        if stack.len() >= MAX_DEPTH {
            return None;
        }
        let name = cur.name()?;
        let mut el = Element {
            name,
            ..Element::default()
        };
        let closed = cur.attrs(&mut el.attrs)?;
        if closed {
            return Some(Some(el));
        }
        stack.push((el, false));
        Some(None)
    };
    if let Some(el) = start(&mut cur, &mut stack)? {
        root = Some(el);
    }
    while root.is_none() {
        let c = cur.rest().chars().next()?;
        let (top, had_child) = stack.last_mut()?;
        match c {
            '<' if cur.eat("<!--") => {
                cur.comment()?;
                *had_child = true;
            }
            '<' if cur.eat("<![CDATA[") => {
                let end = cur.rest().find("]]>")?;
                if !*had_child {
                    top.text.push_str(cur.rest().get(..end)?);
                }
                cur.at += end + 3;
            }
            '<' if cur.eat("</") => {
                let name = cur.name()?;
                cur.skip_space();
                if !cur.eat(">") {
                    return None;
                }
                let (el, _) = stack.pop()?;
                if el.name != name {
                    return None;
                }
                match stack.last_mut() {
                    Some((parent, had)) => {
                        parent.children.push(el);
                        *had = true;
                    }
                    None => root = Some(el),
                }
            }
            '<' => {
                cur.at += 1;
                if let Some(el) = start(&mut cur, &mut stack)? {
                    let (parent, had) = stack.last_mut()?;
                    parent.children.push(el);
                    *had = true;
                } else if let Some(n) = stack.len().checked_sub(2)
                    && let Some((_, had)) = stack.get_mut(n)
                {
                    *had = true;
                }
            }
            '&' => {
                cur.at += 1;
                let mut s = String::new();
                cur.reference(&mut s)?;
                if !*had_child {
                    top.text.push_str(&s);
                }
            }
            _ => {
                if cur.rest().starts_with("]]>") {
                    return None;
                }
                cur.at += c.len_utf8();
                if !*had_child {
                    // XML reads a line break as `\n`.
                    match c {
                        '\r' if cur.rest().starts_with('\n') => {}
                        '\r' => top.text.push('\n'),
                        c => top.text.push(c),
                    }
                }
            }
        }
    }
    // After the root: whitespace and comments only.
    loop {
        cur.skip_space();
        if !cur.eat("<!--") {
            break;
        }
        cur.comment()?;
    }
    cur.rest().is_empty().then_some(root).flatten()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reads_elements_attributes_entities_and_cdata() {
        let doc = "<function name='f &amp; g'>\n<param name=\"a\">x &lt; y&#33;</param>\
                   <param name=\"b\"><![CDATA[if a < b && c]]></param><arguments/></function>";
        let root = parse(doc).unwrap();
        assert_eq!(root.name, "function");
        assert_eq!(root.attr("name"), Some("f & g"));
        let params: Vec<_> = root.children.iter().filter(|c| c.name == "param").collect();
        assert_eq!(params.len(), 2);
        assert_eq!(params[0].text, "x < y!");
        assert_eq!(params[1].text, "if a < b && c");
        assert!(root.child("arguments").is_some());
    }

    #[test]
    fn the_text_is_what_comes_before_the_first_child() {
        let root = parse("<p>a<b>x</b>c</p>").unwrap();
        assert_eq!(root.text, "a");
    }

    #[test]
    fn refuses_what_an_xml_parser_refuses() {
        for doc in [
            "<f><p>a < b</p></f>",
            "<f><p>fish & chips</p></f>",
            "<f><p>x</f></p>",
            "<f a=1></f>",
            "<f a='1' a='2'></f>",
            "<f>&nbsp;</f>",
            "<f>]]></f>",
            "<f></f><g></g>",
            "<f>",
            "text",
            "<f a='<'></f>",
        ] {
            assert_eq!(parse(doc), None, "{doc}");
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = |n: usize| format!("{}{}", "<a>".repeat(n), "</a>".repeat(n));
        assert!(parse(&deep(MAX_DEPTH)).is_some());
        assert_eq!(parse(&deep(MAX_DEPTH + 1)), None);
        assert_eq!(parse(&deep(100_000)), None);
    }
}
