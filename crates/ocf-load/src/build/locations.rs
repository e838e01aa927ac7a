//! Where each node of a YAML document is: a JSON pointer to its line and column. serde_yaml reports
//! a position for its own errors only; the build's checks work on the typed documents and know the
//! pointer, so this index, built from the parser's events, gives them the position.
//!
//! Building the index is also where a document's nesting and alias expansion are bounded: aliases are
//! counted by the size of what they stand for, never expanded.

use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;
use saphyr_parser::{Event, Parser, ScalarStyle, Span};

use super::limits::ReadLimits;
use super::problem::Position;

/// A node's position, and for a map entry's value, its key's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Node {
    value: Position,
    key: Option<Position>,
    /// Where a single-line scalar's text starts, when it is written as is (plain, or quoted without
    /// escapes), so a formula error's range can point inside it.
    text: Option<Position>,
}

/// Pointer to position, for one document.
///
/// A document read in one pass ([`super::plain`]) is indexed when a position is first asked for:
/// most documents of a pack have no problem to place, and the index costs as much as reading them.
#[derive(Debug, Clone, Default)]
pub struct Locations {
    nodes: OnceLock<FxHashMap<String, Node>>,
    /// The text to index, and the renames made since, when the index is made on demand.
    later: Option<Box<Later>>,
}

#[derive(Debug, Clone)]
struct Later {
    text: Arc<str>,
    limits: ReadLimits,
    /// Each call of [`Locations::alias`] so far, in order.
    renames: Vec<Vec<(String, String)>>,
}

/// Why a document could not be indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexError {
    /// Not YAML: the parser's message and where.
    Syntax { message: String, at: Position },
    /// A read limit, named as decisions.md does.
    Limit {
        limit: &'static str,
        message: String,
        at: Position,
        pointer: String,
    },
}

impl Locations {
    /// The position of the node at `pointer`, or of its nearest indexed ancestor (nodes inside an
    /// alias's expansion are not indexed: they are where the anchor is).
    pub fn value(&self, pointer: &str) -> Option<Position> {
        self.nearest(pointer).map(|node| node.value)
    }

    /// The position of the key of the map entry at `pointer` (where an author looks for a duplicate
    /// or misplaced entry), else of its value.
    pub fn key(&self, pointer: &str) -> Option<Position> {
        self.nearest(pointer)
            .map(|node| node.key.unwrap_or(node.value))
    }

    /// Whether the document has a node at `pointer` itself.
    pub fn has(&self, pointer: &str) -> bool {
        self.nodes().contains_key(pointer)
    }

    /// Where the text of the scalar at `pointer` starts, when it is on one line and written as is.
    pub fn text(&self, pointer: &str) -> Option<Position> {
        self.nodes().get(pointer).and_then(|node| node.text)
    }

    /// The index of a document its reader has already checked (it parses, within `limits`), to be
    /// made when first asked for.
    pub fn later(text: &str, limits: &ReadLimits) -> Locations {
        Locations {
            nodes: OnceLock::new(),
            later: Some(Box::new(Later {
                text: text.into(),
                limits: *limits,
                renames: Vec::new(),
            })),
        }
    }

    fn nodes(&self) -> &FxHashMap<String, Node> {
        self.nodes.get_or_init(|| {
            let Some(later) = &self.later else {
                return FxHashMap::default();
            };
            // The reader parsed this text within the same limits: the index can't fail.
            let mut nodes = Locations::index(&later.text, &later.limits)
                .map(|index| index.nodes.into_inner().unwrap_or_default())
                .unwrap_or_default();
            for renames in &later.renames {
                rename(&mut nodes, renames);
            }
            nodes
        })
    }

    /// Gives the nodes at and under `written` the same positions at and under `expanded` too, in
    /// one pass for every pair: a family key expanded into several keys is found where it was
    /// written. Pairs apply in order, so a rename inside a renamed node refines it.
    pub fn alias(&mut self, renames: &[(String, String)]) {
        if renames.is_empty() {
            return;
        }
        match (self.nodes.get_mut(), &mut self.later) {
            (None, Some(later)) => later.renames.push(renames.to_vec()),
            (Some(nodes), _) => rename(nodes, renames),
            (None, None) => {}
        }
    }

    fn nearest(&self, pointer: &str) -> Option<&Node> {
        let nodes = self.nodes();
        let mut pointer = pointer;
        loop {
            if let Some(node) = nodes.get(pointer) {
                return Some(node);
            }
            pointer = &pointer[..pointer.rfind('/')?];
        }
    }

    /// Indexes the first document of `text`.
    pub fn index(text: &str, limits: &ReadLimits) -> Result<Locations, IndexError> {
        Indexer {
            limits,
            text,
            nodes: FxHashMap::default(),
            stack: Vec::new(),
            anchor_sizes: FxHashMap::default(),
            chars: CharIndex::new(text),
        }
        .run()
    }
}

/// [`Locations::alias`] on the index.
fn rename(nodes: &mut FxHashMap<String, Node>, renames: &[(String, String)]) {
    let mut sorted: Vec<(String, Node)> = nodes.iter().map(|(p, n)| (p.clone(), *n)).collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (written, expanded) in renames {
        let start = sorted.partition_point(|(p, _)| p.as_str() < written.as_str());
        let under = sorted[start..]
            .iter()
            .take_while(|(p, _)| p.starts_with(written.as_str()))
            .filter(|(p, _)| p.len() == written.len() || p[written.len()..].starts_with('/'))
            .map(|(p, n)| (format!("{expanded}{}", &p[written.len()..]), *n))
            .collect::<Vec<_>>();
        nodes.extend(under);
    }
}

/// An open map or list.
struct Open {
    pointer: String,
    /// A list's next index, or for a map whether the next scalar is a key.
    next: Next,
    anchor: usize,
    /// Nodes in it so far, aliases expanded.
    size: u64,
}

enum Next {
    Index(usize),
    Key,
    Value { key: String, at: Position },
}

struct Indexer<'a> {
    limits: &'a ReadLimits,
    text: &'a str,
    nodes: FxHashMap<String, Node>,
    stack: Vec<Open>,
    anchor_sizes: FxHashMap<usize, u64>,
    /// The parser gives positions in characters; a scalar's text is found by its byte.
    chars: CharIndex<'a>,
}

impl Indexer<'_> {
    fn run(mut self) -> Result<Locations, IndexError> {
        let mut parser = Parser::new_from_str(self.text);
        let mut total: u64 = 0;
        while let Some(event) = parser.next_event() {
            let (event, span) = event.map_err(|error| {
                let at = position(error.marker().line(), error.marker().col());
                // The scanner's own bound on flow nesting (255 levels), met before ours when it
                // scans ahead.
                if error.info().contains("recursion limit exceeded") {
                    return IndexError::Limit {
                        limit: "maxNesting",
                        message: format!(
                            "maps and lists nest more than {} deep",
                            self.limits.max_nesting
                        ),
                        at,
                        pointer: String::new(),
                    };
                }
                IndexError::Syntax {
                    message: error.info().to_owned(),
                    at,
                }
            })?;
            let at = position(span.start.line(), span.start.col());
            match event {
                Event::DocumentEnd => break,
                Event::Scalar(value, style, anchor, _) => {
                    if self.take_key(&value, at).is_some() {
                        continue;
                    }
                    let text = self.text_start(&value, style, span);
                    let pointer = self.next_pointer();
                    self.record(pointer, at, text);
                    self.add(1, anchor, &mut total, at)?;
                }
                Event::Alias(anchor) => {
                    if self.take_key("", at).is_some() {
                        continue;
                    }
                    let pointer = self.next_pointer();
                    self.record(pointer, at, None);
                    let size = self.anchor_sizes.get(&anchor).copied().unwrap_or(1);
                    self.add(size, 0, &mut total, at)?;
                }
                Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                    // A map or list as a key: YAML allows it, our documents never use one (serde
                    // refuses it). It is indexed under the key `?`.
                    let _ = self.take_key("?", at);
                    let (pointer, key) = self.next_pointer();
                    self.record((pointer.clone(), key), at, None);
                    if self.stack.len() >= self.limits.max_nesting {
                        return Err(IndexError::Limit {
                            limit: "maxNesting",
                            message: format!(
                                "maps and lists nest more than {} deep",
                                self.limits.max_nesting
                            ),
                            at,
                            pointer,
                        });
                    }
                    let next = if matches!(event, Event::SequenceStart(..)) {
                        Next::Index(0)
                    } else {
                        Next::Key
                    };
                    self.stack.push(Open {
                        pointer,
                        next,
                        anchor,
                        size: 1,
                    });
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    // The parser balances starts and ends.
                    let Some(open) = self.stack.pop() else {
                        continue;
                    };
                    if open.anchor != 0 {
                        self.anchor_sizes.insert(open.anchor, open.size);
                    }
                    if let Some(parent) = self.stack.last_mut() {
                        parent.size = parent.size.saturating_add(open.size);
                    }
                }
                Event::Nothing
                | Event::StreamStart
                | Event::StreamEnd
                | Event::DocumentStart(_) => {}
            }
        }
        Ok(Locations {
            nodes: OnceLock::from(self.nodes),
            later: None,
        })
    }

    /// In a map expecting a key, takes `key` as it: the next node is its value.
    fn take_key(&mut self, key: &str, at: Position) -> Option<()> {
        let open = self.stack.last_mut()?;
        if matches!(open.next, Next::Key) {
            open.next = Next::Value {
                key: key.to_owned(),
                at,
            };
            Some(())
        } else {
            None
        }
    }

    /// The next node's pointer and its key's position, moving its parent on. One string per node,
    /// which becomes the index's key (only a map or list's is copied, for its children).
    fn next_pointer(&mut self) -> (String, Option<Position>) {
        use std::fmt::Write;
        let Some(open) = self.stack.last_mut() else {
            return (String::new(), None);
        };
        let mut pointer = String::with_capacity(open.pointer.len() + 16);
        pointer.push_str(&open.pointer);
        pointer.push('/');
        match std::mem::replace(&mut open.next, Next::Key) {
            Next::Index(i) => {
                open.next = Next::Index(i + 1);
                let _ = write!(pointer, "{i}");
                (pointer, None)
            }
            Next::Value { key, at } => {
                pointer.push_str(&escape(&key));
                (pointer, Some(at))
            }
            // Every caller offers the node as a key first; a key node is never placed.
            Next::Key => {
                pointer.push('?');
                (pointer, None)
            }
        }
    }

    /// Records the node starting at `at` under its pointer (the first node written there wins).
    fn record(
        &mut self,
        (pointer, key): (String, Option<Position>),
        at: Position,
        text: Option<Position>,
    ) {
        self.nodes.entry(pointer).or_insert(Node {
            value: at,
            key,
            text,
        });
    }

    /// Counts a scalar's or an alias's nodes into its parent and the document's total.
    fn add(
        &mut self,
        size: u64,
        anchor: usize,
        total: &mut u64,
        at: Position,
    ) -> Result<(), IndexError> {
        if anchor != 0 {
            self.anchor_sizes.insert(anchor, size);
        }
        *total = total.saturating_add(size);
        if *total > self.limits.max_expanded_nodes {
            return Err(IndexError::Limit {
                limit: "maxExpandedNodes",
                message: format!(
                    "the document expands to more than {} nodes (an alias bomb?)",
                    self.limits.max_expanded_nodes
                ),
                at,
                pointer: self
                    .stack
                    .last()
                    .map_or(String::new(), |o| o.pointer.clone()),
            });
        }
        if let Some(parent) = self.stack.last_mut() {
            parent.size = parent.size.saturating_add(size);
        }
        Ok(())
    }

    /// Where a scalar's characters start in the source, when they are its value as written.
    fn text_start(&mut self, value: &str, style: ScalarStyle, span: Span) -> Option<Position> {
        if value.contains('\n') {
            return None;
        }
        let offset = match style {
            ScalarStyle::Plain => 0,
            ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => 1,
            _ => return None,
        };
        let byte = self.chars.byte_of(span.start.index() + offset)?;
        self.text[byte..]
            .starts_with(value)
            .then(|| position(span.start.line(), span.start.col() + offset))
    }
}

/// The byte offsets of a text's characters by their index, as the parser gives positions: the
/// parser's events come in text order, so walking on from the last index asked keeps the walk
/// linear in the text (from the start each time, it was quadratic).
pub(super) struct CharIndex<'a> {
    text: &'a str,
    /// Whether every character is a byte, so that an index is its offset.
    ascii: bool,
    /// A character index and its byte offset.
    cursor: (usize, usize),
}

impl<'a> CharIndex<'a> {
    pub(super) fn new(text: &'a str) -> CharIndex<'a> {
        CharIndex {
            text,
            ascii: text.is_ascii(),
            cursor: (0, 0),
        }
    }

    /// The byte offset of character `index` (back to the start only if asked for one before the
    /// last).
    pub(super) fn byte_of(&mut self, index: usize) -> Option<usize> {
        if self.ascii {
            return (index <= self.text.len()).then_some(index);
        }
        if index < self.cursor.0 {
            self.cursor = (0, 0);
        }
        let (mut at, mut byte) = self.cursor;
        let mut rest = self.text[byte..].chars();
        while at < index {
            byte += rest.next()?.len_utf8();
            at += 1;
        }
        self.cursor = (at, byte);
        Some(byte)
    }
}

fn position(line: usize, col: usize) -> Position {
    Position {
        line,
        column: col + 1,
    }
}

/// A key as a JSON pointer segment (RFC 6901); most keys need no escape, and are not copied.
pub fn escape(key: &str) -> std::borrow::Cow<'_, str> {
    if key.contains(['~', '/']) {
        key.replace('~', "~0").replace('/', "~1").into()
    } else {
        key.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(text: &str) -> Locations {
        Locations::index(text, &ReadLimits::default()).unwrap()
    }

    #[test]
    fn pointers_find_lines_and_columns() {
        let text = "id: x\neffects:\n  - { target: ac, op: add, value: 'a + b' }\n  - target: hp\n";
        let locations = index(text);
        let at = |line, column| Some(Position { line, column });
        assert_eq!(locations.value(""), at(1, 1));
        assert_eq!(locations.value("/id"), at(1, 5));
        assert_eq!(locations.key("/id"), at(1, 1));
        assert_eq!(locations.value("/effects/0"), at(3, 5));
        assert_eq!(locations.value("/effects/0/value"), at(3, 35));
        assert_eq!(locations.text("/effects/0/value"), at(3, 36));
        assert_eq!(locations.key("/effects/1/target"), at(4, 5));
        // Below an indexed node, the nearest ancestor answers.
        assert_eq!(locations.value("/effects/1/target/x/y"), at(4, 13));
    }

    #[test]
    fn keys_with_slashes_are_escaped() {
        let locations = index("fields:\n  a/b~c: 1\n");
        assert_eq!(
            locations.value("/fields/a~1b~0c"),
            Some(Position {
                line: 2,
                column: 10
            })
        );
    }

    #[test]
    fn alias_bombs_and_deep_nesting_are_refused() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let refs = vec![format!("*a{}", i - 1); 9].join(", ");
            bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        let error = Locations::index(&bomb, &ReadLimits::default()).unwrap_err();
        assert!(
            matches!(
                error,
                IndexError::Limit {
                    limit: "maxExpandedNodes",
                    ..
                }
            ),
            "{error:?}"
        );

        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        let error = Locations::index(&deep, &ReadLimits::default()).unwrap_err();
        assert!(
            matches!(
                error,
                IndexError::Limit {
                    limit: "maxNesting",
                    ..
                }
            ),
            "{error:?}"
        );
    }

    #[test]
    fn syntax_errors_have_a_position() {
        let error = Locations::index("a: [1, 2\nb: 3\n", &ReadLimits::default()).unwrap_err();
        assert!(matches!(error, IndexError::Syntax { .. }), "{error:?}");
    }
}
