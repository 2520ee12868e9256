//! Templates given as JSON, and names: what compiles, which parser a pair of names selects, and
//! what is refused.

use super::*;

#[test]
fn bad_templates_say_why() {
    let err = |json: &str| Template::from_json(json).unwrap_err();
    assert!(err("{\"fields\": {}}").contains("non-empty"));
    assert!(
        err("{\"start_anchor\": \"a\", \"fields\": {\"content\": {\"close_pattern\": \"(\"}}}")
            .contains("close_pattern")
    );
    assert!(
        err("{\"start_anchor\": \"a\", \"fields\": {\"a\": {}, \"b\": {}}}")
            .contains("at most one")
    );
    assert!(
        err("{\"start_anchor\": \"a\", \"fields\": {\"content\": {\"bogus\": 1}}}")
            .contains("bogus")
    );
}

#[test]
fn names_and_templates_select_a_parser() {
    let det = Arc::new(Detokenizer::from_json(&crate::doc_tokenizer_json()).unwrap());
    let pick = |r: Option<&str>, t: Option<&str>, json: Option<&str>| select(&det, r, t, json);
    let p = pick(Some("llama3_json"), Some("llama3_json"), None)
        .unwrap()
        .unwrap();
    // Llama's template has no reasoning field: only its tool part is on.
    assert_eq!(
        (p.reasoning_name(), p.tool_name()),
        (None, Some("llama3_json"))
    );
    let p = pick(Some("qwen3"), Some("qwen3_coder"), None)
        .unwrap()
        .unwrap();
    assert_eq!(
        (p.reasoning_name(), p.tool_name()),
        (Some("qwen3_coder"), Some("qwen3_coder"))
    );
    let p = pick(Some("qwen3"), Some("hermes"), None).unwrap().unwrap();
    assert_eq!(
        (p.reasoning_name(), p.tool_name()),
        (Some("qwen3"), Some("hermes"))
    );
    let json = super::builtin::json("qwen3_template");
    let p = pick(None, None, json).unwrap().unwrap();
    assert_eq!(p.reasoning_name(), Some(TEMPLATE_NAME));
    assert!(
        pick(Some(AUTO), None, None)
            .unwrap_err()
            .contains("there is none")
    );
    assert!(
        pick(Some("hermes"), None, json)
            .unwrap_err()
            .contains("\"hermes\"")
    );
    assert!(
        pick(Some("glm45"), Some("kimi_k2"), None)
            .unwrap_err()
            .contains("two different")
    );
    assert!(pick(None, None, None).unwrap().is_none());
    // Every name is one of its kind, also beside a template.
    for (r, t, bad) in [
        (Some("deepseek_v3"), Some("nonsense_xyz"), "nonsense_xyz"),
        (Some("nonsense_abc"), Some("qwen3_coder"), "nonsense_abc"),
        (Some("hermes"), None, "hermes"),
        (None, Some("qwen3"), "qwen3"),
    ] {
        let err = pick(r, t, None).unwrap_err();
        assert!(err.contains(&format!("{bad:?}; known: ")), "{err}");
        assert!(err.contains("\"deepseek_v31\""), "{err}");
    }
    // Two templates of one chat format: reasoning from one, tool calls from the other.
    let p = pick(Some("deepseek_v3"), Some("deepseek_v31"), None)
        .unwrap()
        .unwrap();
    assert_eq!(
        (p.reasoning_name(), p.tool_name()),
        (Some("deepseek_v3"), Some("deepseek_v31"))
    );
}

#[test]
fn no_refused_name_is_served() {
    for (kind, name, _) in REFUSED {
        for k in [Kind::Tool, Kind::Reasoning] {
            if kind.is_none_or(|kind| kind == k) {
                assert!(
                    !accepted_names(k).contains(&name),
                    "{name} is refused and served"
                );
            }
        }
    }
}
