//! Python call lists, streamed and read.

#![allow(clippy::unwrap_used)]

use super::*;

fn args(s: &str) -> Option<String> {
    arguments(s)
}

#[test]
fn literals_are_written_as_json_dumps_writes_them() {
    let cases = [
        (r#"city="Paris""#, r#"{"city": "Paris"}"#),
        ("q='x', n=1", r#"{"q": "x", "n": 1}"#),
        (
            "a=True, b=None, c=false, d=null",
            r#"{"a": true, "b": null, "c": false, "d": null}"#,
        ),
        (
            "x=-1.5e3, y=+2, z=0x1F",
            r#"{"x": -1500.0, "y": 2, "z": 31}"#,
        ),
        (
            "t=(1, 2), s={'a'}, e=()",
            r#"{"t": [1, 2], "s": ["a"], "e": []}"#,
        ),
        (
            "d={'k': [1, {2: 'v'}], True: 1}",
            r#"{"d": {"k": [1, {"2": "v"}], "true": 1}}"#,
        ),
        (
            r"s='a\nb\x41\u00e9', r=r'\d'",
            r#"{"s": "a\nbAé", "r": "\\d"}"#,
        ),
        ("s='a' \"b\"  f'c{{'", r#"{"s": "abc{"}"#),
        ("s='''it's'''", r#"{"s": "it's"}"#),
        ("1, 'x', k=1,", r#"{"k": 1}"#),
        ("", "{}"),
        ("c='a', u=1, c='b'", r#"{"c": "b", "u": 1}"#),
        ("n=007, z=00", r#"{"n": 7, "z": 0}"#),
        ("x=1e16, y=1_000", r#"{"x": 1e+16, "y": 1000}"#),
    ];
    for (src, want) in cases {
        assert_eq!(args(src).as_deref(), Some(want), "{src}");
    }
}

#[test]
fn what_python_refuses_is_not_read() {
    for src in [
        "x=b'a'",
        "x=y",
        "x=1j",
        "x=f'{a}'",
        "x={true: 1}",
        "x={-1: 1}",
        "x=[1,",
        "x='\\N{DASH}'",
    ] {
        assert_eq!(args(src), None, "{src}");
    }
    let deep = format!("x={}{}", "[".repeat(200), "]".repeat(200));
    assert_eq!(args(&deep), None);
}

#[test]
fn a_list_streams_as_it_reads_whole() {
    let text = r#"city="Pa)ris", n=[1, ")"]), search(query='x # y') ] tail"#;
    let whole = {
        let mut py = Py::default();
        let mut ev = Vec::new();
        let n = py.feed(text, &mut |e| ev.push(e));
        (n, render(&ev))
    };
    assert_eq!(&text[whole.0..], " tail");
    assert_eq!(
        whole.1,
        r#"{"city": "Pa)ris", "n": [1, ")"]}, =search, {"query": "x # y"}"#
    );
    for cut in 1..text.len() {
        if !text.is_char_boundary(cut) {
            continue;
        }
        let mut py = Py::default();
        let mut ev = Vec::new();
        let a = py.feed(&text[..cut], &mut |e| ev.push(e));
        let py: Py = serde_json::from_str(&serde_json::to_string(&py).unwrap()).unwrap();
        let mut py = py;
        let b = if a == cut {
            py.feed(&text[cut..], &mut |e| ev.push(e))
        } else {
            0
        };
        assert_eq!((a + b, render(&ev)), whole, "{cut}");
    }
}

fn render(ev: &[Event]) -> String {
    ev.iter()
        .map(|e| match e {
            Event::Name(n) => format!("={n}"),
            Event::Arguments(a) => a.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
