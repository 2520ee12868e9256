//! The engine's additions for message and section formats (Muse's recipients, MiniMax-M3's call
//! block, Cohere's sections), on their built-in templates: whole output and every cut in three
//! give the same message.

use super::super::typed::Typing;
use super::{call, every_split, knobs, run};
use crate::parse::template::TemplateParser;

const THINK: &str = " to=self<|message|>Plan.<|eom|>";

fn head(recipient: &str) -> String {
    format!("<|start|>assistant to={recipient}<|message|>")
}

fn invoke(name: &str, params: &[(&str, &str)]) -> String {
    let tags: String = params
        .iter()
        .map(|(k, v)| format!("<atem:parameter name=\"{k}\">{v}</atem:parameter>\n"))
        .collect();
    format!("<atem:invoke name=\"{name}\">\n{tags}</atem:invoke>\n")
}

#[test]
fn muse_messages_go_by_their_recipient() {
    let out = format!(
        "{THINK}{}Checking.<|eom|>{}<atem:function_calls>\n{}</atem:function_calls><|eom|>\
         {}internal<|eom|>{}Sunny.",
        head("commentary"),
        head("get_weather"),
        invoke("get_weather", &[("city", "Paris")]),
        head("developer"),
        head("user"),
    );
    let (content, reasoning, calls) = every_split("muse", "", &out);
    assert_eq!(
        (content.as_str(), reasoning.as_str()),
        ("Checking.Sunny.", "Plan.")
    );
    assert_eq!(calls, [call("get_weather", r#"{"city": "Paris"}"#)]);
    // Glimmer: commentary and developer messages are tools', dropped.
    let (content, _, _) = every_split("muse_glimmer", "", &out);
    assert_eq!(content, "Sunny.");
}

#[test]
fn a_call_outside_a_tool_message_is_text() {
    let echo = invoke("get_weather", &[("city", "Rome")]);
    let out = format!("{THINK}{}Write: {echo}", head("user"));
    let (content, _, calls) = every_split("muse", "", &out);
    assert_eq!(content, format!("Write: {echo}"));
    assert!(calls.is_empty());
}

#[test]
fn a_messages_end_drops_a_call_left_open() {
    let out = format!(
        "{THINK}{}<atem:invoke name=\"get_weather\">\n\
         <atem:parameter name=\"city\">Paris</atem:parameter>\n<|eom|>{}Sorry.",
        head("get_weather"),
        head("user"),
    );
    let (content, reasoning, calls) = every_split("muse", "", &out);
    assert_eq!((content.as_str(), reasoning.as_str()), ("Sorry.", "Plan."));
    assert!(calls.is_empty());
}

#[test]
fn muse_names_and_values_by_the_request() {
    let (_, t) = TemplateParser::builtin("muse").unwrap();
    let request = r#"{"tools": [{"type": "function", "function": {"name": "get_weather",
        "parameters": {"properties": {"zip": {"type": "string"}, "n": {"type": "integer"},
        "maybe": {"type": ["string", "null"]}}}}}]}"#;
    let mut k = knobs();
    k.request = Some(request);
    k.typing = Typing::Muse;
    let params = [
        ("zip", "75001"),
        ("n", "7"),
        ("maybe", "12"),
        ("other", "[1]"),
    ];
    let out = format!(
        "{}{}{}",
        head("get_weather.get_weather"),
        invoke("get_weather.get_weather", &params),
        invoke("weather.get", &params[..1]),
    );
    let m = run(&t, k, "", &[&out]);
    // The doubled name is the declared one, and its `string` key stays text; a name the
    // request does not declare stays as written, its values read as JSON.
    assert_eq!(
        m.2,
        [
            call(
                "get_weather",
                r#"{"zip": "75001", "n": 7, "maybe": 12, "other": [1]}"#
            ),
            call("weather.get", r#"{"zip": 75001}"#)
        ]
    );
}

#[test]
fn minimax_m3_calls_only_in_a_block_and_a_leading_close_ends_reasoning() {
    let ns = "]<]minimax[>[";
    let invoke = format!("{ns}<invoke name=\"f\">{ns}<a>1{ns}</a>{ns}</invoke>");
    let out = format!("</mm:think>x {invoke} y{ns}<tool_call>\n{invoke}\n{ns}</tool_call>\nz");
    let (content, reasoning, calls) = every_split("minimax_m3", "", &out);
    assert_eq!(
        (content.as_str(), reasoning.as_str()),
        (format!("x {invoke} y").as_str(), "")
    );
    assert_eq!(calls, [call("f", r#"{"a": "1"}"#)]);
    // A `</mm:think>` that is not the output's first text is content.
    let (content, _, _) = every_split("minimax_m3", "", "a</mm:think><mm:think>b</mm:think>c");
    assert_eq!(content, "a</mm:think>c");
}

#[test]
fn cohere_sections_citations_and_whitespace() {
    let out = "<|START_THINKING|>\n The tool said <co>sunny</co: 0:[0]>. <|END_THINKING|>\n\
               <|START_RESPONSE|>\n It is <co>sunny</co: 0:[1,2]> and warm. \n<|END_RESPONSE|>\
               dropped<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"f\", \
               \"parameters\": {\"a\": 1}}]<|END_ACTION|> dropped";
    let (content, reasoning, calls) = every_split("cohere_command3", "", out);
    // Citation tags leave without ending the text around them; content keeps its leading
    // whitespace (but for the newline after the reasoning, which goes nowhere) and loses its
    // trailing whitespace at each marker.
    assert_eq!(
        (content.as_str(), reasoning.as_str()),
        ("\n It is sunny and warm.", "The tool said sunny.")
    );
    assert_eq!(calls, [call("f", r#"{"a": 1}"#)]);
    // An empty reasoning trims the leading whitespace of the text that follows.
    let (content, _, _) = every_split(
        "cohere_command3",
        "",
        "<|START_THINKING|><|END_THINKING|>\n  Hi.",
    );
    assert_eq!(content, "Hi.");
    // cohere_command4 starts in reasoning.
    let (content, reasoning, _) = every_split(
        "cohere_command4",
        "",
        "Plan.<|END_THINKING|><|START_TEXT|>Hi.<|END_TEXT|>",
    );
    assert_eq!((content.as_str(), reasoning.as_str()), ("Hi.", "Plan."));
}

#[test]
fn a_reader_reads_a_closed_region_or_leaves_its_text() {
    let (_, t) = TemplateParser::builtin("minicpm5").unwrap();
    let request = r#"{"tools": [{"type": "function", "function": {"name": "f",
        "parameters": {"properties": {"a": {"type": "integer"}}, "required": ["a"]}}}]}"#;
    let mut k = knobs();
    k.request = Some(request);
    let good = "<function name=\"f\"><param name=\"a\">1</param></function>";
    let bad = "<function name=\"g\"><param name=\"a\">1</param></function>";
    let cut = "<function name=\"f\"><param name=\"a\">1";
    let out = format!("x {bad} y {good} z {cut}");
    let whole = run(&t, k, "", &[&out]);
    assert_eq!(whole.0, format!("x {bad} y  z {cut}"));
    assert_eq!(whole.2, [call("f", r#"{"a": 1}"#)]);
    // Cut anywhere, the same message.
    for at in out.char_indices().map(|(i, _)| i) {
        assert_eq!(
            run(&t, k, "", &[&out[..at], &out[at..]]),
            whole,
            "cut at {at}"
        );
    }
}

#[test]
fn k2_horizon_reads_its_block_once_and_holds_content_whitespace_across_it() {
    let (_, t) = TemplateParser::builtin("k2_horizon").unwrap();
    let request = r#"{"tools": [{"type": "function", "function": {"name": "f"}}]}"#;
    let mut k = knobs();
    k.request = Some(request);
    k.vllm_space = Some(false);
    k.lead_across_calls = true;
    let block = "<ifm|tool_calls><ifm|tool_call>f</ifm|tool_call></ifm|tool_calls>";
    let out = format!("<ifm|think>Plan.</ifm|think>\n{block} Done.{block}");
    let (content, reasoning, calls) = run(&t, k, "", &[&out]);
    // The whitespace before the block goes with the text after it; the second block is text.
    assert_eq!(content, format!("\n Done.{block}"));
    assert_eq!(reasoning, "Plan.");
    assert_eq!(calls, [call("f", "{}")]);
    // Whitespace alone around the block is no content.
    let m = run(
        &t,
        k,
        "",
        &[&format!("<ifm|think>P</ifm|think>\n{block}\n")],
    );
    assert_eq!(m.0, "");
}

#[test]
fn minicpmv_reads_escaped_newlines_back_outside_code() {
    let (_, t) = TemplateParser::builtin("minicpmv").unwrap();
    let mut k = knobs();
    k.unescape_newlines = true;
    let out = "<think>a\\nb</think>c\\nd `e\\nf` <|im_end|>g";
    let mut state = super::super::TemplateState::default();
    let mut all = crate::parse::Delta::default();
    for piece in out.split_inclusive('\\') {
        let mut d = crate::parse::Delta::default();
        state.feed(&t, k, piece, false, &mut d);
        state.unescape(&mut d, (0, 0), false);
        all.append(d);
    }
    let mut d = crate::parse::Delta::default();
    state.feed(&t, k, "", true, &mut d);
    state.unescape(&mut d, (0, 0), true);
    all.append(d);
    let (content, reasoning, _) = all.into_parts();
    assert_eq!(
        (content.as_str(), reasoning.as_str()),
        ("c\nd `e\\nf` g", "a\nb")
    );
}
