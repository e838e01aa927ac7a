//! A tolerant index of one YAML document's nodes: each node's JSON pointer, its key's and its
//! value's byte spans, and a scalar's text. Unlike the build's index (which refuses a malformed
//! document), it keeps every node read before a syntax error, so a half-typed file still has its
//! places for hover, definition and completion.

use std::sync::Arc;

use rustc_hash::FxHashMap;
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
    /// Where each byte of a scalar's value is in the text, however it is written (folded or
    /// literal blocks, multi-line plain or quoted scalars, escapes), when it could be found.
    pub map: Option<SourceMap>,
}

/// Where the bytes of a scalar's value are in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceMap {
    /// The value is the text from this offset on.
    Shift(usize),
    /// For each byte of the value, and its end, the offset in the text (never decreasing).
    Table(Arc<[u32]>),
}

impl SourceMap {
    /// The text offset of the value's byte `i` (its end for `i` = the value's length).
    pub fn to_text(&self, i: usize) -> usize {
        match self {
            SourceMap::Shift(start) => start + i,
            SourceMap::Table(table) => table.get(i).or(table.last()).map_or(0, |&t| t as usize),
        }
    }

    /// How many of the value's bytes are before the text offset `offset`.
    pub fn to_value(&self, offset: usize, len: usize) -> usize {
        match self {
            SourceMap::Shift(start) => offset.saturating_sub(*start).min(len),
            SourceMap::Table(table) => {
                let bytes = &table[..table.len().saturating_sub(1)];
                bytes.partition_point(|&t| (t as usize) < offset).min(len)
            }
        }
    }

    /// The text span of the value's bytes `a..b`.
    pub fn span(&self, a: usize, b: usize) -> Span {
        let start = self.to_text(a);
        // The end is where the value's next byte is written (a folded line break, an escape,
        // the closing quote), or the start when the range is empty.
        let end = if b > a { self.to_text(b) } else { start };
        Span {
            start,
            end: end.max(start),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct YamlIndex {
    pub nodes: Vec<Node>,
    /// Where the parser stopped, if the text is not well-formed YAML.
    pub error: Option<(usize, String)>,
    /// Each pointer's first node: a look-up per reference must not scan the file.
    by_pointer: FxHashMap<String, usize>,
}

impl YamlIndex {
    pub fn get(&self, pointer: &str) -> Option<&Node> {
        self.by_pointer.get(pointer).map(|&i| &self.nodes[i])
    }

    /// The direct children of the node at `pointer`, in the text's order.
    pub fn children<'a>(&'a self, pointer: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        let first = self
            .by_pointer
            .get(pointer)
            .map_or(self.nodes.len(), |&i| i + 1);
        let depth = pointer.matches('/').count() + 1;
        self.nodes[first..]
            .iter()
            .take_while(move |n| {
                n.pointer.len() > pointer.len()
                    && n.pointer.starts_with(pointer)
                    && n.pointer.as_bytes()[pointer.len()] == b'/'
            })
            .filter(move |n| n.pointer.matches('/').count() == depth)
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
                let map = match text_start {
                    Some(start) => Some(SourceMap::Shift(start)),
                    None => align(text, &value, style, span),
                };
                let node = place(
                    &mut out,
                    &mut stack,
                    NodeKind::Scalar,
                    span,
                    Some(value.to_string()),
                    text_start,
                );
                out.nodes[node].map = map;
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
    for (i, node) in out.nodes.iter().enumerate() {
        out.by_pointer.entry(node.pointer.clone()).or_insert(i);
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
        map: None,
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

/// Where each byte of a scalar's value is in the text, found by walking the value and its text
/// together: a folded line break is the value's space, indentation and the line breaks YAML
/// drops are skipped, a quoted scalar's escapes (`\\n`, `\\u00e9`, `''`, an escaped line break)
/// stand for what they mean. `None` when the walk loses its way (it never guesses).
fn align(text: &str, value: &str, style: ScalarStyle, span: Span) -> Option<SourceMap> {
    let (mut s, end) = match style {
        ScalarStyle::Plain => (span.start, span.end),
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
            (span.start + 1, span.end.checked_sub(1)?)
        }
        _ => {
            // A block scalar's value starts on the line after its header (the span starts at
            // the header, or already at the value).
            let raw = text.get(span.start..)?;
            if raw.starts_with(['|', '>']) {
                (span.start + raw.find('\n')? + 1, span.end)
            } else {
                (span.start, span.end)
            }
        }
    };
    let end = end.min(text.len());
    if value.len() >= u32::MAX as usize || end >= u32::MAX as usize {
        return None;
    }
    let mut table: Vec<u32> = Vec::with_capacity(value.len() + 1);
    for c in value.chars() {
        loop {
            if s >= end {
                // A block's final line break may come from its chomping, past the span.
                if c == '\n' {
                    table.push(end as u32);
                    break;
                }
                return None;
            }
            let sc = text.get(s..)?.chars().next()?;
            if style == ScalarStyle::DoubleQuoted && sc == '\\' {
                let (decoded, len) = escape_at(text.get(s..end)?)?;
                match decoded {
                    None => {
                        s += len;
                        continue;
                    }
                    Some(d) if d == c => {
                        table.extend(std::iter::repeat_n(s as u32, c.len_utf8()));
                        s += len;
                        break;
                    }
                    Some(_) => return None,
                }
            }
            if style == ScalarStyle::SingleQuoted && sc == '\'' && c == '\'' {
                table.push(s as u32);
                s += 2;
                break;
            }
            if sc == c {
                table.extend((0..c.len_utf8()).map(|k| (s + k) as u32));
                s += sc.len_utf8();
                break;
            }
            if c == ' ' && (sc == '\n' || sc == '\r') {
                table.push(s as u32);
                s += 1;
                break;
            }
            if sc.is_whitespace() {
                s += sc.len_utf8();
                continue;
            }
            return None;
        }
    }
    table.push(s.min(end) as u32);
    Some(SourceMap::Table(table.into()))
}

/// A double-quoted scalar's escape at the start of `text`: what it stands for (`None` for an
/// escaped line break, with the next line's indentation) and its length in the text.
fn escape_at(text: &str) -> Option<(Option<char>, usize)> {
    let mut chars = text.chars();
    chars.next()?;
    let c = chars.next()?;
    let hex = |n: usize| {
        let digits = text.get(2..2 + n)?;
        let code = u32::from_str_radix(digits, 16).ok()?;
        // A lone surrogate is read as the replacement character.
        Some((Some(char::from_u32(code).unwrap_or('\u{fffd}')), 2 + n))
    };
    let one = |d: char| Some((Some(d), 1 + c.len_utf8()));
    match c {
        '0' => one('\0'),
        'a' => one('\u{7}'),
        'b' => one('\u{8}'),
        't' | '\t' => one('\t'),
        'n' => one('\n'),
        'v' => one('\u{b}'),
        'f' => one('\u{c}'),
        'r' => one('\r'),
        'e' => one('\u{1b}'),
        ' ' => one(' '),
        '"' => one('"'),
        '/' => one('/'),
        '\\' => one('\\'),
        'N' => one('\u{85}'),
        '_' => one('\u{a0}'),
        'L' => one('\u{2028}'),
        'P' => one('\u{2029}'),
        'x' => hex(2),
        'u' => hex(4),
        'U' => hex(8),
        '\n' | '\r' => {
            let rest = &text[1..];
            let skipped = if rest.starts_with("\r\n") { 2 } else { 1 };
            let after = &rest[skipped..];
            let indent = after.len() - after.trim_start_matches([' ', '\t']).len();
            Some((None, 1 + skipped + indent))
        }
        _ => None,
    }
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
