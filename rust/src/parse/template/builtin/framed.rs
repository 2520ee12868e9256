//! The built-in templates' JSON for formats framed by messages, sections or blocks (MiniMax-M3,
//! Muse, Cohere Command, MiniCPM5, K2 Horizon, MiniCPM-V), one constant a family, as a
//! checkpoint would carry it; those whose calls a reader reads name it.

/// MiniMax-M3: reasoning between `<mm:think>` and `</mm:think>` (once; a `</mm:think>` the
/// output begins with is dropped and ends it), and calls inside a `]<]minimax[>[<tool_call>`
/// block only: `]<]minimax[>[<invoke name="NAME">`, arguments as nested elements each tag of
/// which begins with the namespace `]<]minimax[>[` (`xml-tree`), up to `]<]minimax[>[</invoke>`.
/// Text in a block around its calls, and after it, is dropped. The prompt is not read.
pub(super) const MINIMAX_M3: &str = r##"{
  "start_anchor_pattern": "\\z",
  "fields": {
    "reasoning_content": {"open": "<mm:think>", "close": "</mm:think>"},
    "thinking": {"open_pattern": "\\A</mm:think>", "close_pattern": "(?=)"},
    "tool_calls": {
      "open_pattern": "\\]<\\]minimax\\[>\\[<invoke name=[\"']?\\s*(?P<name>[^>]*?)\\s*[\"']?>",
      "close": "]<]minimax[>[</invoke>",
      "repeats": true, "content": "xml-tree",
      "content_args": {"marker": "]<]minimax[>[", "in_block": true},
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "tool_text": {"open": "]<]minimax[>[<tool_call>"},
    "tools_block": {"open": "]<]minimax[>[<tool_call>"},
    "content": {}
  }
}"##;

/// Muse Spark (`muse`, also vLLM's `musespark1x`): messages `<|start|>assistant to=R<|message|>`
/// (the first one without `<|start|>assistant`, the prompt's), each ended by `<|eom|>`,
/// `<|eot|>` or the next header. `to=self` and a bare header are reasoning; `to=user` and
/// `to=commentary` content; `to=developer` dropped; any other recipient a tool, whose message
/// holds ATEM calls (`<atem:invoke name="N">` with `<atem:parameter name="K">V</atem:parameter>`
/// tags), sent once each closes, and dropped where calls are not parsed. A call outside a tool
/// message is text; a message's end ends a call left open, which is dropped. Text after a
/// message's end and before the next header is dropped. Equal matches go to the field whose name
/// sorts first: `reasoning_content` over `self_message` (the same messages where reasoning is
/// not parsed), the recipients' fields over `tool_text` and `unparsed_call_message`.
pub(super) const MUSE: &str = r##"{
  "start_anchor": "<|start|>assistant",
  "fields": {
    "reasoning_content": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)(?:to=self)?<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)",
      "repeats": true, "join": "", "content_args": {"strip": false}
    },
    "self_message": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)(?:to=self)?<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "addressed": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=(?:user|commentary)<\\|message\\|>",
      "close_pattern": "(?=)"
    },
    "developer": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=developer<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "tool_text": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=[^\\s<]+<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "unparsed_call_message": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=[^\\s<]+<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "tool_calls": {
      "open_pattern": "<atem:invoke\\b[^>]*?\\bname=\"(?P<name>[^\"]+)\"[^>]*>",
      "close": "</atem:invoke>", "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<atem:parameter\\b[^>]*?\\bname=\"(?P<key>[^\"]+)\"[^>]*?>(?P<value>.*?)</atem:parameter>",
        "closed_only": true, "in_block": true, "collapse_doubled_names": true,
        "stop_pattern": "<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>"
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "message_end": {
      "open": ["<|eom|>", "<|eot|>"],
      "close_pattern": "(?=<\\|start\\|>|[^\\S\\n]*(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "content": {"repeats": true, "join": "", "content_args": {"strip": false}}
  }
}"##;

/// Muse Glimmer (`muse_glimmer`): Muse Spark's messages, but only `to=self` is reasoning (its
/// messages joined by a newline), `to=user` and a bare header are content, and `to=commentary`
/// and `to=developer` are tools.
pub(super) const MUSE_GLIMMER: &str = r##"{
  "start_anchor": "<|start|>assistant",
  "fields": {
    "reasoning_content": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=self<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)",
      "repeats": true, "join": "\n", "content_args": {"strip": false}
    },
    "self_message": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=self<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "addressed": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)(?:to=user)?<\\|message\\|>",
      "close_pattern": "(?=)"
    },
    "tool_text": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=[^\\s<]+<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "unparsed_call_message": {
      "open_pattern": "(?:<\\|start\\|>\\s*assistant\\s*|[^\\S\\n]*)to=[^\\s<]+<\\|message\\|>",
      "close_pattern": "(?=<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "tool_calls": {
      "open_pattern": "<atem:invoke\\b[^>]*?\\bname=\"(?P<name>[^\"]+)\"[^>]*>",
      "close": "</atem:invoke>", "repeats": true, "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<atem:parameter\\b[^>]*?\\bname=\"(?P<key>[^\"]+)\"[^>]*?>(?P<value>.*?)</atem:parameter>",
        "closed_only": true, "in_block": true, "collapse_doubled_names": true,
        "stop_pattern": "<\\|eom\\|>|<\\|eot\\|>|<\\|start\\|>|(?:to=[^\\s<]+)?<\\|message\\|>"
      },
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "message_end": {
      "open": ["<|eom|>", "<|eot|>"],
      "close_pattern": "(?=<\\|start\\|>|[^\\S\\n]*(?:to=[^\\s<]+)?<\\|message\\|>)"
    },
    "content": {"repeats": true, "join": "", "content_args": {"strip": false}}
  }
}"##;

/// Cohere Command (`cohere_command3`: Command R7B, Command A): marker-delimited sections, each
/// marker ending the one before it wherever it comes. `<|START_THINKING|>` opens reasoning (any
/// number of times; leading whitespace is trimmed from there up to the first text, in whatever
/// section), `<|END_THINKING|>` and `<|START_RESPONSE|>` content, `<|START_ACTION|>` a JSON list
/// of `{"tool_call_id", "tool_name", "parameters"}` calls (dropped where calls are not parsed);
/// after `<|END_RESPONSE|>` or `<|END_ACTION|>` text is dropped up to the next marker. Content
/// keeps its leading whitespace; citation tags (`<co>`, `</co: 0:[1]>`) are dropped, their text
/// kept. The prompt is not read (the anchor never matches).
pub(super) const COHERE_COMMAND3: &str = r##"{
  "start_anchor_pattern": "<\\|CHATBOT_TOKEN\\|>[^\\s\\S]",
  "fields": {
    "reasoning_content": {
      "open": "<|START_THINKING|>",
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|END_RESPONSE|END_ACTION)\\|>)",
      "repeats": true, "join": "", "content_args": {"lstrip_after": true}
    },
    "tool_calls": {
      "open": "<|START_ACTION|>",
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|END_RESPONSE|END_ACTION)\\|>)",
      "repeats": true, "content": "json", "transform_each": true,
      "transform": {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}}
    },
    "tools_block": {
      "open": "<|START_ACTION|>",
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|END_RESPONSE|END_ACTION)\\|>)"
    },
    "after_end": {
      "open": ["<|END_RESPONSE|>", "<|END_ACTION|>"],
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION)\\|>)"
    },
    "markers": {"open": ["<|START_RESPONSE|>", "<|END_THINKING|>"], "close_pattern": "(?=)"},
    "citations": {"open_pattern": "<co>|</co: [^<>]*>", "content_args": {"inline": true}},
    "content": {"repeats": true, "join": "", "content_args": {"strip": "trailing"}}
  }
}"##;

/// Cohere Command 4 (`cohere_command4`: Command A Reasoning, Vision, MoE): Command 3's sections,
/// the output starting in reasoning, and `<|START_TEXT|>` / `<|END_TEXT|>` as the answer's
/// markers beside `<|START_RESPONSE|>` / `<|END_RESPONSE|>`.
pub(super) const COHERE_COMMAND4: &str = r##"{
  "start_anchor_pattern": "<\\|CHATBOT_TOKEN\\|>[^\\s\\S]",
  "fields": {
    "reasoning_content": {
      "open_pattern": "^(?:<\\|START_THINKING\\|>)?|<\\|START_THINKING\\|>",
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|START_TEXT|END_RESPONSE|END_ACTION|END_TEXT)\\|>)",
      "repeats": true, "join": "", "content_args": {"lstrip_after": true}
    },
    "tool_calls": {
      "open": "<|START_ACTION|>",
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|START_TEXT|END_RESPONSE|END_ACTION|END_TEXT)\\|>)",
      "repeats": true, "content": "json", "transform_each": true,
      "transform": {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}}
    },
    "tools_block": {
      "open": "<|START_ACTION|>",
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|START_TEXT|END_RESPONSE|END_ACTION|END_TEXT)\\|>)"
    },
    "after_end": {
      "open": ["<|END_RESPONSE|>", "<|END_TEXT|>", "<|END_ACTION|>"],
      "close_pattern": "(?=<\\|(?:END_THINKING|START_THINKING|START_RESPONSE|START_ACTION|START_TEXT)\\|>)"
    },
    "markers": {
      "open": ["<|START_RESPONSE|>", "<|START_TEXT|>", "<|END_THINKING|>"], "close_pattern": "(?=)"
    },
    "citations": {"open_pattern": "<co>|</co: [^<>]*>", "content_args": {"inline": true}},
    "content": {"repeats": true, "join": "", "content_args": {"strip": "trailing"}}
  }
}"##;

/// MiniCPM5's calls: `<function name="NAME"><param name="KEY">VALUE</param></function>`, each
/// read whole when it closes by the `minicpm5` reader (as XML where it is well-formed, else by
/// patterns, checked against the request's tools); a call that is not one, or that the output
/// cuts, is text. Reasoning between `<think>` and `</think>`, for a reasoning parser named
/// beside it (vLLM has no MiniCPM5 reasoning parser). Text as written.
pub(super) const MINICPM5: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close": "</think>", "content_args": {"strip": false}},
    "tool_calls": {
      "open": "<function", "close": "</function>", "repeats": true,
      "content": "reader", "content_args": {"reader": "minicpm5"}
    },
    "content": {"repeats": true, "content_args": {"strip": false}}
  }
}"##;

/// K2 Horizon: reasoning between `<ifm|think>` and `</ifm|think>` (the high effort's markers;
/// the parser swaps in `<ifm|think_fast>` or `<ifm|think_faster>` by the request's effort), and
/// one call block, `<ifm|tool_calls>` … `</ifm|tool_calls>`, read whole when it closes by the
/// `k2_horizon` reader: all of its calls, or its text as content; later blocks are text. The
/// prompt is read from the start of its last ids, so an earlier turn's close counts.
pub(super) const K2_HORIZON: &str = r##"{
  "start_anchor_pattern": "\\A",
  "fields": {
    "reasoning_content": {"open": "<ifm|think>", "close": "</ifm|think>"},
    "tool_calls": {
      "open": "<ifm|tool_calls>", "close": "</ifm|tool_calls>",
      "content": "reader", "content_args": {"reader": "k2_horizon", "once": true}
    },
    "content": {}
  }
}"##;

/// MiniCPM-V (`minicpmv`, reasoning): Qwen3's `<think>` reasoning, which a `<tool_call>` also
/// ends (the call is content where no tool parser reads it), the vocabulary's other special
/// tokens and reserved markers dropped wherever they are, and escaped newlines (`\n` written as
/// a backslash and `n`) read back outside code and math in reasoning and content, as vLLM's
/// `minicpmv` parser reads them.
pub(super) const MINICPMV: &str = r##"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {
      "open": "<think>", "close": "</think>", "content_args": {"stop_pattern": "<tool_call>"}
    },
    "markers": {
      "open": [
        "<|im_end|>", "<|endoftext|>", "<|im_start|>", "<|object_ref_start|>",
        "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>",
        "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
        "<reserved_12>", "<reserved_13>", "<reserved_14>", "<reserved_15>",
        "<|reserved_12|>", "<|reserved_13|>", "<|reserved_14|>", "<|reserved_15|>"
      ],
      "content_args": {"inline": true}
    },
    "content": {}
  }
}"##;
