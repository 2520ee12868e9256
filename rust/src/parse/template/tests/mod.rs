//! The executor on the built-in templates: whole output, and every way of cutting it in three
//! with the state carried as JSON between the pieces, give the same message.

use std::sync::Arc;

use super::exec::Knobs;
use super::*;
use crate::parse::ToolRules;

mod messages;
mod select;

type Message = (String, String, Vec<(String, String)>);

fn knobs() -> Knobs<'static> {
    Knobs {
        request: None,
        typing: super::typed::Typing::Transformers,
        vllm_space: None,
        content_lstrip_newlines: false,
        lead_across_calls: false,
        unescape_newlines: false,
        hf: false,
        reasoning: true,
        calls_end_reasoning: false,
        reasoning_call_lead: None,
        reasoning_once: false,
        tools: true,
        calls_off_block: true,
        calls_off_unnamed: false,
        rules: ToolRules {
            enabled: true,
            parallel: true,
            thinking: true,
            thinking_asked: true,
            thinking_unless_off: true,
            thinking_unless_given_off: true,
            thinking_first: true,
            effort_thinks: true,
            effort_thinks_by_default: true,
            thinking_mode_enabled: false,
        },
    }
}

fn run(t: &Template, k: Knobs<'_>, prefix: &str, pieces: &[&str]) -> Message {
    let mut state = TemplateState::default();
    let mut scratch = Delta::default();
    if let Some(end) = t.anchor.last_end(prefix) {
        state.feed(t, k, &prefix[end..], false, &mut scratch);
        state.after_prompt(t, false);
    }
    let mut all = Delta::default();
    for piece in pieces {
        let mut d = Delta::default();
        state.feed(t, k, piece, false, &mut d);
        state = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
        all.append(d);
    }
    state.feed(t, k, "", true, &mut all);
    all.into_parts()
}

fn every_split(name: &str, prefix: &str, output: &str) -> Message {
    let (_, t) = TemplateParser::builtin(name).unwrap();
    let whole = run(&t, knobs(), prefix, &[output]);
    let cuts: Vec<usize> = output.char_indices().map(|(i, _)| i).collect();
    for &a in &cuts {
        for &b in cuts.iter().filter(|&&b| b > a).step_by(5) {
            let pieces = [&output[..a], &output[a..b], &output[b..]];
            assert_eq!(
                run(&t, knobs(), prefix, &pieces),
                whole,
                "{name}: cut at {a}, {b}"
            );
        }
    }
    whole
}

fn call(name: &str, args: &str) -> (String, String) {
    (name.to_owned(), args.to_owned())
}

#[test]
fn qwen3_reasoning_content_and_calls() {
    let out = "<think>\nplan 中\n</think>\n\nHi 👋\n<tool_call>\n{\"name\": \"f\", \"arguments\": \
               {\"q\": \"a}</tool_call>\\\"\", \"n\": [1]}}\n</tool_call>\n<tool_call>\n{\"name\": \
               \"g\", \"arguments\": {}}\n</tool_call>";
    let (content, reasoning, calls) = every_split("qwen3_template", "<|im_start|>assistant\n", out);
    assert_eq!(reasoning, "plan 中");
    assert_eq!(content, "Hi 👋");
    assert_eq!(
        calls,
        [
            call("f", r#"{"q": "a}</tool_call>\"", "n": [1]}"#),
            call("g", "{}")
        ]
    );
}

#[test]
fn the_prompt_opens_reasoning() {
    let (content, reasoning, calls) = every_split(
        "deepseek_r1_template",
        "<｜User｜>hi<｜Assistant｜><think>\n",
        "I think.\n</think>\n\nAnswer.",
    );
    assert_eq!(
        (content.as_str(), reasoning.as_str()),
        ("Answer.", "I think.")
    );
    assert!(calls.is_empty());
    // A prompt that closed it starts in content.
    let (_, t) = TemplateParser::builtin("qwen3_template").unwrap();
    let prefix = "<|im_start|>assistant\n<think>\n\n</think>\n\n";
    let m = run(&t, knobs(), prefix, &["Hello", " there"]);
    assert_eq!((m.0.as_str(), m.1.as_str()), ("Hello there", ""));
}

#[test]
fn pattern_named_calls_and_lookahead_closes() {
    let out = "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]ping[ARGS]{}";
    let (content, _, calls) = every_split("mistral_v11", "[INST]hi[/INST]", out);
    assert_eq!(content, "");
    assert_eq!(
        calls,
        [
            call("get_weather", r#"{"city": "Paris"}"#),
            call("ping", "{}")
        ]
    );
    let out = "[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \
               \"arguments\": {}}]";
    let (_, _, calls) = every_split("mistral", "[INST]hi[/INST]", out);
    assert_eq!(calls, [call("a", r#"{"x": 1}"#), call("b", "{}")]);
    let out = "{\"name\": \"f\", \"parameters\": {\"a\": {\"b\": \"}\"}}}";
    let (content, _, calls) = every_split("llama3_json", "", out);
    assert_eq!(content, "");
    assert_eq!(calls, [call("f", r#"{"a": {"b": "}"}}"#)]);
}

#[test]
fn json_calls_end_where_their_json_ends() {
    // The text after a call's JSON is content (vLLM's parsers read the JSON with `raw_decode`
    // and drop that text from the whole response).
    let tail = "\nI have called the tool.";
    let out =
        format!("{{\"name\": \"get_weather\", \"parameters\": {{\"city\": \"Paris\"}}}}{tail}");
    let (content, _, calls) = every_split("llama3_json", "", &out);
    assert_eq!(content, "I have called the tool.");
    assert_eq!(calls, [call("get_weather", r#"{"city": "Paris"}"#)]);
    let out = format!("[TOOL_CALLS]get_weather[ARGS]{{\"city\": \"Paris\"}}{tail}");
    let (content, _, calls) = every_split("mistral_v11", "[INST]hi[/INST]", &out);
    assert_eq!(content, "I have called the tool.");
    assert_eq!(calls, [call("get_weather", r#"{"city": "Paris"}"#)]);
    let out = format!(
        "[TOOL_CALLS] [{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris\"}}}}]{tail}"
    );
    let (content, _, calls) = every_split("mistral", "[INST]hi[/INST]", &out);
    assert_eq!(content, "I have called the tool.");
    assert_eq!(calls, [call("get_weather", r#"{"city": "Paris"}"#)]);
    // Calls separated by `;`, and a close delimiter inside the arguments' strings.
    let out = "{\"name\": \"f\", \"parameters\": {\"q\": \"}; x\"}}; {\"name\": \"g\", \
               \"arguments\": {}}";
    let (content, _, calls) = every_split("llama3_json", "", out);
    assert_eq!(content, "");
    assert_eq!(calls, [call("f", r#"{"q": "}; x"}"#), call("g", "{}")]);
    let out =
        "<｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"q\": \"<｜tool▁call▁end｜>\"}<｜tool▁call▁end｜>";
    let (_, _, calls) = every_split("deepseek_v31", "", out);
    assert_eq!(calls, [call("f", r#"{"q": "<｜tool▁call▁end｜>"}"#)]);
    // Arguments that are not JSON run to the close, as written.
    let out = "<｜tool▁call▁begin｜>f<｜tool▁sep｜>not json<｜tool▁call▁end｜>Done.";
    let (content, _, calls) = every_split("deepseek_v31", "", out);
    assert_eq!(
        (content.as_str(), calls),
        ("Done.", vec![call("f", "not json")])
    );
}

#[test]
fn tag_calls_become_json_objects() {
    let out = "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n\
               <parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";
    let (content, _, calls) = every_split("qwen3_coder", "", out);
    assert_eq!(content, "Sure.");
    assert_eq!(
        calls,
        [call("get_weather", r#"{"city": "Paris", "days": 3}"#)]
    );
}

/// As [`run`], with reasoning opened by the request before the prompt's text.
fn run_thinking(t: &Template, k: Knobs<'_>, prefix: &str, pieces: &[&str]) -> Message {
    let mut state = TemplateState::default();
    let mut all = Delta::default();
    state.open_reasoning(t, k);
    if let Some(end) = t.anchor.last_end(prefix) {
        state.feed(t, k, &prefix[end..], false, &mut Delta::default());
        state.after_prompt(t, true);
    }
    for piece in pieces {
        let mut d = Delta::default();
        state.feed(t, k, piece, false, &mut d);
        state = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
        all.append(d);
    }
    state.feed(t, k, "", true, &mut all);
    all.into_parts()
}

#[test]
fn reasoning_started_by_the_request_follows_the_prompt() {
    let (_, t) = TemplateParser::builtin("qwen3_coder").unwrap();
    let mut k = knobs();
    k.calls_end_reasoning = true;
    k.reasoning_once = true;
    let head = "<|im_start|>assistant\n";
    let m = run_thinking(&t, k, head, &["No markers", " at all."]);
    assert_eq!((m.0.as_str(), m.1.as_str()), ("", "No markers at all."));
    // A prompt that opened it: the output's own `<think>` is dropped.
    let open = format!("{head}<think>\n");
    let m = run_thinking(&t, k, &open, &["<thi", "nk>Plan.</think>Done."]);
    assert_eq!((m.0.as_str(), m.1.as_str()), ("Done.", "Plan."));
    // A prompt that closed it: content, and a later block is text.
    let closed = format!("{head}<think>\n\n</think>\n\n");
    let m = run_thinking(&t, k, &closed, &["<think>Plan.</think>Done."]);
    assert_eq!(
        (m.0.as_str(), m.1.as_str()),
        ("<think>Plan.</think>Done.", "")
    );
    // A call's open ends reasoning and starts the call.
    let tagged =
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>";
    let m = run_thinking(&t, k, head, &["Look.", tagged]);
    assert_eq!((m.0.as_str(), m.1.as_str()), ("", "Look."));
    assert_eq!(m.2, [call("f", r#"{"a": 1}"#)]);
}

#[test]
fn marked_reasoning_opens_where_the_output_opens_it_once() {
    assert_eq!(Start::of(Some("granite")), Start::Marked);
    assert_eq!(Start::of(Some("hunyuan_a13b")), Start::Marked);
    let (_, t) = TemplateParser::builtin("granite").unwrap();
    let mut k = knobs();
    k.reasoning_once = true;
    let head = "<|start_of_role|>assistant<|end_of_role|>";
    let out =
        "Here is my thought process: A. Here is my response: B. Here is my thought process: C.";
    let want = ("B. Here is my thought process: C.", "A.");
    let cuts: Vec<usize> = out.char_indices().map(|(i, _)| i).collect();
    for &a in cuts.iter().step_by(3) {
        let m = run(&t, k, head, &[&out[..a], &out[a..]]);
        assert_eq!((m.0.as_str(), m.1.as_str()), want, "cut at {a}");
    }
    // Without the phrase, the output is content.
    let m = run(&t, k, head, &["Sunny."]);
    assert_eq!((m.0.as_str(), m.1.as_str()), ("Sunny.", ""));
}

#[test]
fn calls_named_by_their_key() {
    let out = r#"Let me see. <|tools_prefix|>[{"get_weather": {"city": "Paris"}}, {"get_time": {}}]<|tools_suffix|>Done."#;
    let m = every_split("apertus", "<|assistant_start|>", out);
    assert_eq!((m.0.as_str(), m.1.as_str()), ("Let me see.\nDone.", ""));
    assert_eq!(
        m.2,
        [
            call("get_weather", r#"{"city": "Paris"}"#),
            call("get_time", "{}")
        ]
    );
}

#[test]
fn tag_arguments_are_typed_by_the_request() {
    let (_, t) = TemplateParser::builtin("glm45").unwrap();
    let request = r#"{"tools": [{"type": "function", "function": {"name": "f", "parameters":
        {"properties": {"zip": {"type": "string"}, "n": {"type": "integer"}}}}}]}"#;
    let mut k = knobs();
    k.request = Some(request);
    k.typing = super::typed::Typing::Vllm;
    let out = "<tool_call>f\n<arg_key> zip </arg_key>\n<arg_value>75001</arg_value>\n\
               <arg_key>n</arg_key><arg_value>7</arg_value><arg_key>x</arg_key>\
               <arg_value>8</arg_value></tool_call>";
    let m = run(&t, k, "", &[out]);
    assert_eq!(m.2, [call("f", r#"{"zip": "75001", "n": 7, "x": "8"}"#)]);
    // transformers' rules after the json value parser: `75001` is read as a number first.
    k.typing = super::typed::Typing::Transformers;
    let m = run(&t, k, "", &[out]);
    assert_eq!(m.2, [call("f", r#"{"zip": 75001, "n": 7, "x": 8}"#)]);
}

#[test]
fn disabled_parts_stay_text() {
    let (_, t) = TemplateParser::builtin("qwen3_template").unwrap();
    let mut k = knobs();
    k.rules.enabled = false;
    k.reasoning = false;
    let out = "<think>x</think>a<tool_call>{}</tool_call>";
    let m = run(&t, k, "", &[out]);
    assert_eq!(m.0, out);
    assert!(m.2.is_empty());
}

mod split_invariance {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of every built-in template's markup, and text around them.
    const PARTS: &[&str] = &[
        "<think>",
        "</think>",
        "\n",
        " ",
        "a",
        "東",
        "👋",
        "{",
        "}",
        "[",
        "]",
        "\"",
        "\\",
        ":",
        ",",
        "\"name\": \"f\"",
        "\"arguments\": ",
        "<tool_call>",
        "</tool_call>",
        "<function=g>",
        "<parameter=k>",
        "</parameter>",
        "</function>",
        "[TOOL_CALLS]",
        "[ARGS]",
        "[THINK]",
        "[/THINK]",
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁sep｜>",
        "<｜tool▁call▁end｜>",
        "```json\n",
        "\n```",
        "<|tool_call_begin|>",
        "functions.h:0",
        "<|tool_call_argument_begin|>",
        "<|tool_call_end|>",
        "<arg_key>",
        "</arg_key>",
        "<arg_value>",
        "</arg_value>",
        "<|channel|>analysis<|message|>",
        "<|end|>",
        "<|channel|>final<|message|>",
        " to=functions.f<|channel|>commentary json<|message|>",
        "<|call|>",
        "<|python_tag|>",
        "{\"name\": \"f\", \"parameters\": ",
        "<response>",
        "</response>",
        "<tool_calls>",
        "</tool_calls>",
        "<answer>",
        "Here is my thought process:",
        "Here's my response:",
        "<|tool_call|>",
        "<function_call>",
        "functools",
        "<|action_start|><|plugin|>",
        "<|action_end|>",
        "<longcat_tool_call>",
        "</longcat_tool_call>",
        "function call<|role_sep|>\n",
        "<|message_sep|>",
        "<｜tool_call_begin｜>function<｜tool_sep｜>",
        "<steptml:invoke name=\"f\">",
        "<steptml:parameter name=\"k\">",
        "</steptml:parameter>",
        "</steptml:invoke><｜tool_call_end｜>",
        "<dots_function_call>",
        "<invoke name=\"f\">",
        "<parameter name=\"k\">",
        "</invoke>",
        "<|tools_prefix|>",
        "<|tools_suffix|>",
        "{\"f\": ",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

        #[test]
        fn any_split_gives_the_whole_answer(
            picks in proptest::collection::vec(0..PARTS.len(), 0..40),
            cuts in proptest::collection::vec(0usize..400, 0..6),
        ) {
            let text: String = picks.iter().map(|&i| PARTS[i]).collect();
            let mut at: Vec<usize> = cuts
                .iter()
                .map(|&c| c.min(text.len()))
                .filter(|&c| text.is_char_boundary(c))
                .collect();
            at.sort_unstable();
            at.dedup();
            let mut pieces = Vec::new();
            let mut from = 0;
            for &c in &at {
                pieces.push(&text[from..c]);
                from = c;
            }
            pieces.push(&text[from..]);
            for name in TEMPLATES {
                let (_, t) = TemplateParser::builtin(name).unwrap();
                let whole = run(&t, knobs(), "", &[text.as_str()]);
                prop_assert_eq!(run(&t, knobs(), "", &pieces), whole, "{}", name);
            }
        }
    }
}

#[test]
fn text_after_the_arguments_then_not_json_reads_the_same_however_cut() {
    // The call's own text after its arguments (`: "f"` here) is dropped; where text that cannot
    // be JSON follows, the rest runs as written.
    let text = r#"{"name": "f", "parameters": "name": "f""name": "f"<tool_call>"#;
    let whole = every_split("llama3_json", "", text);
    assert_eq!(
        whole,
        (
            String::new(),
            String::new(),
            vec![("f".to_owned(), r#""name"<tool_call>"#.to_owned())]
        )
    );
}

#[test]
fn dsml_calls_read_the_string_attribute_and_drop_the_block_text() {
    let d = "｜DSML｜";
    let out = format!(
        "Hi.\n<{d}function_calls>\n<{d}invoke name=\"f\">\n\
         <{d}parameter name=\"s\" string=\"true\">42</{d}parameter>\n\
         <{d}parameter name=\"n\" string=\"false\">42</{d}parameter>\n\
         <{d}parameter name=\"o\" string=\"false\">{{\"a\": [1, \"</{d}invoke>\"]}}</{d}parameter>\n\
         <{d}parameter name=\"bad\" string=\"false\">{{a</{d}parameter>\n\
         <{d}parameter name=\"cut\" string=\"true\">x\n\
         <{d}parameter name=\"plain\">true</{d}parameter>\n\
         </{d}invoke>\njunk\n<{d}invoke name=\"g\">\n</{d}invoke>\n</{d}function_calls>\nAfter."
    );
    let (content, reasoning, calls) = every_split("deepseek_v32", "<｜Assistant｜>", &out);
    assert_eq!((content.as_str(), reasoning.as_str()), ("Hi.", ""));
    // A close marker inside a value ends the call there (the cut tag is dropped, the rest of
    // the call is block text), as vLLM's parser ends it.
    assert_eq!(
        calls,
        [call("f", r#"{"s": "42", "n": 42}"#), call("g", "{}")]
    );
    let out = format!(
        "<{d}invoke name=\"f\">\
         <{d}parameter name=\"bad\" string=\"false\">{{a</{d}parameter>\
         <{d}parameter name=\"cut\" string=\"true\">x\n\
         <{d}parameter name=\"plain\">true</{d}parameter></{d}invoke>"
    );
    let (_, _, calls) = every_split("deepseek_v32", "<｜Assistant｜>", &out);
    assert_eq!(
        calls,
        [call("f", r#"{"bad": "{a", "cut": "x\n", "plain": true}"#)]
    );
}

#[test]
fn a_call_block_stays_where_calls_are_not_named_and_drops_where_turned_off() {
    let (_, t) = TemplateParser::builtin("deepseek_v32").unwrap();
    let out = "A <｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n</｜DSML｜invoke>\n\
               </｜DSML｜function_calls> B";
    let mut k = knobs();
    k.tools = false;
    let m = run(&t, k, "<｜Assistant｜>", &[out]);
    assert_eq!((m.0.as_str(), m.2.len()), (out, 0));
    // Named, and turned off by the request (`tool_choice: "none"`): dropped.
    let mut k = knobs();
    k.rules.enabled = false;
    let m = run(&t, k, "<｜Assistant｜>", &[out]);
    assert_eq!((m.0.as_str(), m.2.len()), ("AB", 0));
}

#[test]
fn kimi_k3_channels_typed_arguments_and_whole_calls() {
    let (o, c, s) = ("<|open|>", "<|close|>", "<|sep|>");
    let arg =
        |key: &str, ty: &str, v: &str| format!("{o}argument key=\"{key}\"{ty}{s}{v}{c}argument{s}");
    let out = format!(
        "{o}think{s}Plan.{c}think{s}{o}response{s}Hi.{c}response{s}{o}tools{s}\
         {o}call tool=\"{}\" index=\"1\"{s}{}{}{}{}{c}call{s}\
         {o}call tool=\"\"{s}{c}call{s}\
         {o}call tool=\"g\" index=\"3\"{s}{c}call{s}{c}tools{s}{c}message{s}",
        "f&amp;x",
        arg("s", " type=\"string\"", "42"),
        arg("n", " type=\"number\"", "42"),
        arg("k&quot;", "", "a&amp;b"),
        arg("bad", " type=\"object\"", "{a"),
    );
    let (content, reasoning, calls) = every_split("kimi_k3", "", &out);
    assert_eq!((content.as_str(), reasoning.as_str()), ("Hi.", "Plan."));
    // A call without a name is dropped, and the next one takes its place.
    assert_eq!(
        calls,
        [
            call(
                "f&x",
                r#"{"s": "42", "n": 42, "k\"": "a&amp;b", "bad": "{a"}"#
            ),
            call("g", "{}")
        ]
    );
    // A call the output cuts is dropped: nothing of it was sent.
    let cut = format!("{o}tools{s}{o}call tool=\"f\"{s}{}", arg("s", "", "4"));
    let (content, _, calls) = every_split("kimi_k3", "", &cut[..cut.len() - 12]);
    assert_eq!((content.as_str(), calls.len()), ("", 0));
    // Calls not parsed: the tools channel is dropped; reasoning not parsed: the think channel.
    let (_, t) = TemplateParser::builtin("kimi_k3").unwrap();
    let mut k = knobs();
    (k.tools, k.reasoning) = (false, false);
    let m = run(&t, k, "", &[&out]);
    assert_eq!((m.0.as_str(), m.1.as_str(), m.2.len()), ("Hi.", "", 0));
}

#[test]
fn a_call_block_ends_at_its_close_and_empty_arguments_are_an_object() {
    let m = |s: &str| format!("<|plamo:{s}:plamo|>");
    let request = |name: &str, args: &str| {
        format!(
            "{}{}{name}{}{}<|plamo:constrain|>json<|plamo:msg|>{args}{}{}",
            m("begin_tool_request"),
            m("begin_tool_name"),
            m("end_tool_name"),
            m("begin_tool_arguments"),
            m("end_tool_arguments"),
            m("end_tool_request"),
        )
    };
    let out = format!(
        "{}Plan.{}{}{}junk{}{}After.<|plamo:tag|>",
        m("begin_think"),
        m("end_think"),
        m("begin_tool_requests"),
        request("f", r#"{"a": 1} extra"#),
        request("g", " "),
        m("end_tool_requests"),
    );
    let (content, reasoning, calls) = every_split("plamo3", "", &out);
    // The block's text between and after the calls is dropped up to its close; the text after
    // the close is content again.
    assert_eq!((content.as_str(), reasoning.as_str()), ("After.", "Plan."));
    assert_eq!(calls, [call("f", r#"{"a": 1}"#), call("g", "{}")]);
}
