//! A tolerant index of one YAML document's nodes: each node's JSON pointer, its key's and its
//! value's byte spans, and a scalar's text. Unlike the build's index (which refuses a malformed
//! document), it keeps every node read before a syntax error, so a half-typed file still has its
//! places for hover, definition and completion.

use saphyr_parser::{Event, Parser, ScalarStyle, Span as YamlSpan};

/// A byte range of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn contains(&self, offset: usize) -> bool {
        self.start <= offset && offset <= self.end
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Scalar,
    Map,
    List,
    Alias,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub pointer: String,
    pub kind: NodeKind,
    /// The key of the map entry holding the node, with its text.
    pub key: Option<(Span, String)>,
    pub span: Span,
    /// A scalar's value.
    pub scalar: Option<String>,
    /// Where a scalar's value starts in the text when it is written as is (plain, or quoted
    /// without escapes, on one line): offsets inside the value are offsets inside the text.
    pub text_start: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct YamlIndex {
    pub nodes: Vec<Node>,
    /// Where the parser stopped, if the text is not well-formed YAML.
    pub error: Option<(usize, String)>,
}

impl YamlIndex {
    pub fn get(&self, pointer: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.pointer == pointer)
    }

    /// The innermost node whose key or value holds `offset`, and whether the offset is on the key.
    pub fn at(&self, offset: usize) -> Option<(&Node, bool)> {
        let mut best: Option<(&Node, bool)> = None;
        for node in &self.nodes {
            if let Some((key, _)) = &node.key
                && key.contains(offset)
            {
                best = Some((node, true));
                continue;
            }
            if node.span.contains(offset) {
                match best {
                    Some((b, _)) if b.pointer.len() > node.pointer.len() => {}
                    _ => best = Some((node, false)),
                }
            }
        }
        best
    }
}

struct Open {
    node: usize,
    list: Option<usize>,
    pending_key: Option<(Span, String)>,
    expecting_key: bool,
}

/// Indexes the first document of `text`; a document nested deeper than `max_depth` stops the
/// index there (the build reports the limit).
pub fn index(text: &str, max_depth: usize) -> YamlIndex {
    let chars = CharOffsets::new(text);
    let mut out = YamlIndex::default();
    let mut stack: Vec<Open> = Vec::new();
    let mut parser = Parser::new_from_str(text);
    let mut events = 0usize;
    while let Some(event) = parser.next_event() {
        events += 1;
        // Every event consumes input, so this bounds nothing a file's size does not; it guards
        // against a parser that would stop advancing.
        if events > text.len() * 4 + 16 {
            break;
        }
        let (event, span) = match event {
            Ok(ok) => ok,
            Err(error) => {
                out.error = Some((chars.byte(error.marker().index()), error.info().to_owned()));
                break;
            }
        };
        let span = chars.span(span);
        match event {
            Event::DocumentEnd => break,
            Event::Scalar(value, style, _, _) => {
                if let Some(open) = stack.last_mut()
                    && open.expecting_key
                {
                    open.expecting_key = false;
                    open.pending_key = Some((span, value.to_string()));
                    continue;
                }
                let text_start = as_is(text, &value, style, span);
                place(
                    &mut out,
                    &mut stack,
                    NodeKind::Scalar,
                    span,
                    Some(value.to_string()),
                    text_start,
                );
            }
            Event::Alias(_) => {
                if let Some(open) = stack.last_mut()
                    && open.expecting_key
                {
                    open.expecting_key = false;
                    open.pending_key = Some((span, String::new()));
                    continue;
                }
                place(&mut out, &mut stack, NodeKind::Alias, span, None, None);
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let is_list = matches!(event, Event::SequenceStart(..));
                if let Some(open) = stack.last_mut()
                    && open.expecting_key
                {
                    open.expecting_key = false;
                    open.pending_key = Some((span, "?".to_owned()));
                }
                let kind = if is_list {
                    NodeKind::List
                } else {
                    NodeKind::Map
                };
                let node = place(&mut out, &mut stack, kind, span, None, None);
                if stack.len() >= max_depth {
                    break;
                }
                stack.push(Open {
                    node,
                    list: is_list.then_some(0),
                    pending_key: None,
                    expecting_key: !is_list,
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                if let Some(open) = stack.pop() {
                    let node = &mut out.nodes[open.node];
                    node.span.end = node.span.end.max(span.end);
                }
            }
            _ => {}
        }
    }
    // Nodes left open by an error end where the text ends.
    for open in stack {
        out.nodes[open.node].span.end = text.len();
    }
    out
}

fn place(
    out: &mut YamlIndex,
    stack: &mut [Open],
    kind: NodeKind,
    span: Span,
    scalar: Option<String>,
    text_start: Option<usize>,
) -> usize {
    let (pointer, key) = match stack.last_mut() {
        None => (String::new(), None),
        Some(open) => {
            let parent = &out.nodes[open.node].pointer;
            match &mut open.list {
                Some(i) => {
                    let pointer = format!("{parent}/{i}");
                    *i += 1;
                    (pointer, None)
                }
                None => {
                    open.expecting_key = true;
                    let key = open.pending_key.take();
                    let name = key.as_ref().map_or("?", |(_, k)| k.as_str());
                    (format!("{parent}/{}", escape(name)), key)
                }
            }
        }
    };
    out.nodes.push(Node {
        pointer,
        kind,
        key,
        span,
        scalar,
        text_start,
    });
    out.nodes.len() - 1
}

/// Where a scalar's value starts when the text holds it unchanged.
fn as_is(text: &str, value: &str, style: ScalarStyle, span: Span) -> Option<usize> {
    let raw = text.get(span.start..span.end)?;
    let inner = match style {
        ScalarStyle::Plain => (raw == value).then_some(span.start),
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
            let inner = raw.get(1..raw.len().checked_sub(1)?)?;
            (inner == value).then_some(span.start + 1)
        }
        _ => None,
    }?;
    (!value.contains('\n')).then_some(inner)
}

/// RFC 6901 escaping of one pointer segment.
pub fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

pub fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// The parser counts characters; the index works in bytes.
struct CharOffsets {
    /// The byte offset of each character, when the text is not all ASCII.
    bytes: Option<Vec<usize>>,
    len: usize,
}

impl CharOffsets {
    fn new(text: &str) -> CharOffsets {
        let bytes = (!text.is_ascii()).then(|| text.char_indices().map(|(i, _)| i).collect());
        CharOffsets {
            bytes,
            len: text.len(),
        }
    }

    fn byte(&self, index: usize) -> usize {
        match &self.bytes {
            None => index.min(self.len),
            Some(bytes) => bytes.get(index).copied().unwrap_or(self.len),
        }
    }

    fn span(&self, span: YamlSpan) -> Span {
        Span {
            start: self.byte(span.start.index()),
            end: self.byte(span.end.index()),
        }
    }
}
