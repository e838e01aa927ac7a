//! The common document read in one pass: the parser's events made into a tree of nodes, which the
//! typed reading takes, instead of a second parser (serde_yaml's) reading the text again.
//!
//! Two parsers read some texts differently (saphyr, whose events these are, takes things libyaml,
//! serde_yaml's, refuses), so only what both read alike takes this way: no anchor, alias, tag or
//! tab; plain scalars that don't start with an indicator, resolved as serde_yaml resolves an
//! untagged one (decimal numbers, `true`/`false`, `null`, strings); brackets whose lines after the
//! first are indented deeper, with no `:` before `,?[]{}` inside them. For anything else, and
//! whenever the typed reading refuses the value, the caller reads the text as before, so every
//! message an author sees is serde_yaml's, with its path and position. The read limits hold here
//! too: a document nested deeper, or with more nodes, than they allow is left to the caller, whose
//! index reports it.
//!
//! Debug builds read every document both ways and compare; `agreement` below damages sample
//! documents with YAML's meaningful characters and checks that what this way takes, serde_yaml
//! reads, and the same.

use std::fmt;

use saphyr_parser::{Event, Parser, ScalarStyle, StrInput};
use serde::de::value::{MapDeserializer, SeqDeserializer, StringDeserializer};
use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};

use super::limits::ReadLimits;
use super::locations::CharIndex;

/// `text` read into `T` through its events, or `None` where the caller must read it the general way.
pub fn read<T: DeserializeOwned>(text: &str, limits: &ReadLimits) -> Option<T> {
    let node = value(text, limits)?;
    T::deserialize(node).ok()
}

/// A node of the document as serde_yaml resolves it. A string is the parser's own, moved into the
/// type that takes it.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Null,
    Bool(bool),
    /// A non-negative integer (serde_yaml gives these as `u64` first).
    Unsigned(u64),
    Negative(i64),
    Float(f64),
    Str(String),
    List(Vec<Node>),
    /// Entries in document order; a key written twice is kept twice, as serde_yaml's own reading
    /// hands both to the type (which refuses a duplicate field, and keeps a map's last entry).
    Map(Vec<(Node, Node)>),
}

/// An open map or list: its items so far, for a map the key waiting for its value, and for a
/// collection in brackets the line it opened on.
struct Open {
    items: Items,
    flow: Option<Flow>,
}

/// Where a collection in brackets opened: its line, and the byte of its bracket.
#[derive(Clone, Copy)]
struct Flow {
    line: usize,
    byte: usize,
}

enum Items {
    List(Vec<Node>),
    Map(Vec<(Node, Node)>, Option<Node>),
}

/// The first document of `text` as a node, or `None` (see the module's doc).
fn value(text: &str, limits: &ReadLimits) -> Option<Node> {
    if !printable(text) {
        return None;
    }
    let mut parser = Parser::new_from_str(text);
    let mut chars = CharIndex::new(text);
    let mut stack: Vec<Open> = Vec::new();
    let mut nodes: u64 = 0;
    while let Some(event) = parser.next_event() {
        let (event, span) = event.ok()?;
        let node = match event {
            Event::Scalar(text, style, 0, None) => {
                nodes += 1;
                scalar(text.into_owned(), style)?
            }
            Event::SequenceStart(0, None) | Event::MappingStart(0, None) => {
                nodes += 1;
                if stack.len() >= limits.max_nesting {
                    return None;
                }
                let byte = chars.byte_of(span.start.index())?;
                let flow = matches!(text.as_bytes().get(byte), Some(b'[' | b'{'));
                // A map in brackets without its own (`[a: b]`): libyaml refuses some saphyr reads.
                if !flow && stack.last().is_some_and(|open| open.flow.is_some()) {
                    return None;
                }
                stack.push(Open {
                    items: match event {
                        Event::SequenceStart(..) => Items::List(Vec::new()),
                        _ => Items::Map(Vec::new(), None),
                    },
                    flow: flow.then(|| Flow {
                        line: span.start.line(),
                        byte,
                    }),
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let open = stack.pop()?;
                if let Some(flow) = open.flow {
                    let end = chars.byte_of(span.start.index())?;
                    // Brackets over several lines: libyaml wants the lines after the first
                    // indented deeper than it, where saphyr doesn't.
                    if flow.line != span.start.line() && !indented(text, flow.byte, end) {
                        return None;
                    }
                    if !flow_agrees(text.get(flow.byte..end)?) {
                        return None;
                    }
                }
                match open.items {
                    Items::List(items) => Node::List(items),
                    Items::Map(entries, None) => Node::Map(entries),
                    Items::Map(_, Some(_)) => return None,
                }
            }
            Event::Nothing | Event::StreamStart | Event::DocumentStart(_) => continue,
            // A document with no node is left to the caller, which reads it as an empty map.
            Event::DocumentEnd | Event::StreamEnd => return None,
            // An anchor, an alias or a tag: serde_yaml's reading of them is its own (and the two
            // parsers don't end an anchor's name at the same place).
            Event::Alias(_)
            | Event::Scalar(..)
            | Event::SequenceStart(..)
            | Event::MappingStart(..) => {
                return None;
            }
        };
        if nodes > limits.max_expanded_nodes {
            return None;
        }
        match stack.last_mut().map(|open| &mut open.items) {
            None => return only(parser, node),
            Some(Items::List(items)) => items.push(node),
            Some(Items::Map(_, key @ None)) => *key = Some(node),
            Some(Items::Map(entries, key @ Some(_))) => entries.push((key.take()?, node)),
        }
    }
    None
}

/// Whether the lines of brackets from `open` to `close` (bytes of `text`) after the first are
/// indented deeper than the line they open on (blank lines aside).
fn indented(text: &str, open: usize, close: usize) -> bool {
    let first = text[..open].rfind('\n').map_or(0, |at| at + 1);
    let indent = |line: &str| line.len() - line.trim_start_matches(' ').len();
    let depth = indent(&text[first..open]);
    text[open..close]
        .split('\n')
        .skip(1)
        .filter(|line| !line.trim().is_empty())
        .all(|line| indent(line) > depth)
}

/// Whether a collection in brackets is written so that libyaml and saphyr read it
/// alike: outside quotes, no `:` is followed by one of `,?[]{}` (libyaml refuses `a:,`, `a:]`,
/// `a:?b` in brackets, where saphyr reads them).
fn flow_agrees(text: &str) -> bool {
    let bytes = text.as_bytes();
    // The last character that wasn't a space, outside quotes: a quote opens a scalar only after
    // a bracket, a comma or a colon.
    let mut last = b'[';
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\'' | b'"' if matches!(last, b'[' | b'{' | b',' | b':') => {
                // Skip the quoted scalar: `''` inside single quotes, `\x` inside double.
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => return false,
                        Some(&q) if q == b => {
                            if b == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                                i += 2;
                                continue;
                            }
                            break;
                        }
                        Some(b'\\') if b == b'"' => i += 2,
                        Some(_) => i += 1,
                    }
                }
                last = b;
            }
            b':' if matches!(
                bytes.get(i + 1),
                Some(b',' | b'?' | b'[' | b']' | b'{' | b'}') | None
            ) =>
            {
                return false;
            }
            b' ' => {}
            _ => last = b,
        }
        i += 1;
    }
    true
}

/// Whether every character of `text` is one YAML allows in a document (its printable set, as
/// libyaml checks it: serde_yaml refuses the others, where saphyr reads some of them), and not a
/// tab (libyaml refuses tabs in some places saphyr takes them, as indentation before a comment).
fn printable(text: &str) -> bool {
    let ascii = |b: u8| matches!(b, b'\n' | b'\r' | 0x20..=0x7e);
    text.bytes().all(|b| ascii(b) || b >= 0x80)
        && (text.is_ascii()
            || text.chars().all(|c| {
                c.is_ascii()
                    || matches!(c, '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
                    || c >= '\u{10000}'
            }))
}

/// The document's root, when nothing follows it but the end of the stream: serde_yaml refuses a
/// second document, and a syntax error after the first.
fn only(mut parser: Parser<'_, StrInput<'_>>, root: Node) -> Option<Node> {
    while let Some(event) = parser.next_event() {
        match event.ok()?.0 {
            Event::DocumentEnd | Event::StreamEnd | Event::Nothing => {}
            _ => return None,
        }
    }
    Some(root)
}

/// A scalar's value as serde_yaml reads an untagged one (its `visit_untagged_scalar`): quoted and
/// block scalars are strings; a plain one is null, a boolean, a number or a string. `None` for the
/// plain forms this reading leaves to serde_yaml: a leading `+`, hexadecimal, octal and binary
/// numbers, infinities and NaN, and integers beyond 64 bits.
fn scalar(text: String, style: ScalarStyle) -> Option<Node> {
    if style != ScalarStyle::Plain {
        return Some(Node::Str(text));
    }
    match &*text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Node::Null),
        "true" | "True" | "TRUE" => return Some(Node::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Node::Bool(false)),
        _ => {}
    }
    let first = text.as_bytes()[0];
    // A plain scalar can't start with an indicator but `-` (and `?` or `:` before a character,
    // outside brackets): saphyr reads some that libyaml refuses.
    if b"?:,[]{}#&*!|>'\"%@`".contains(&first) {
        return None;
    }
    if !(first.is_ascii_digit() || first == b'-' || first == b'+' || first == b'.') {
        return Some(Node::Str(text));
    }
    let unsigned = text.strip_prefix('-').unwrap_or(&text);
    if text.starts_with('+')
        || unsigned.starts_with("0x")
        || unsigned.starts_with("0o")
        || unsigned.starts_with("0b")
        || unsigned.starts_with('.')
    {
        return None;
    }
    // Leading zeros before digits make a string in YAML 1.2, as in serde_yaml.
    let digits = unsigned.bytes().all(|b| b.is_ascii_digit());
    if digits && unsigned.len() > 1 && unsigned.starts_with('0') {
        return Some(Node::Str(text));
    }
    if digits && !unsigned.is_empty() {
        return match text.starts_with('-') {
            false => text.parse::<u64>().ok().map(Node::Unsigned),
            true => text.parse::<i64>().ok().map(Node::Negative),
        };
    }
    match text.parse::<f64>() {
        Ok(float) if float.is_finite() => Some(Node::Float(float)),
        // `inf`, `NaN` and the like: serde_yaml's own spellings of them start with `.`.
        Ok(_) => None,
        Err(_) => Some(Node::Str(text)),
    }
}

/// Any refusal of the typed reading: the caller reads the document the general way, for
/// serde_yaml's own message.
#[derive(Debug)]
struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("refused")
    }
}

impl std::error::Error for Refused {}

impl de::Error for Refused {
    fn custom<T: fmt::Display>(_: T) -> Refused {
        Refused
    }
}

impl<'de> IntoDeserializer<'de, Refused> for Node {
    type Deserializer = Node;
    fn into_deserializer(self) -> Node {
        self
    }
}

/// The typed reading of a node, as serde_yaml's reading of the same value: a node gives what it is
/// (`deserialize_any`) whatever the type asks for, but for an option (null is none) and an enum
/// (a unit variant, by name; any other form is refused, as serde_yaml's `Value` refuses it).
impl<'de> de::Deserializer<'de> for Node {
    type Error = Refused;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        match self {
            Node::Null => visitor.visit_unit(),
            Node::Bool(b) => visitor.visit_bool(b),
            Node::Unsigned(n) => visitor.visit_u64(n),
            Node::Negative(n) => visitor.visit_i64(n),
            Node::Float(n) => visitor.visit_f64(n),
            Node::Str(s) => visitor.visit_string(s),
            Node::List(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter());
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Node::Map(entries) => {
                let mut map = MapDeserializer::new(entries.into_iter());
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        match self {
            Node::Null => visitor.visit_none(),
            node => visitor.visit_some(node),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Refused> {
        match self {
            Node::Str(s) => visitor.visit_enum(StringDeserializer::new(s)),
            _ => Err(Refused),
        }
    }

    // A list, a map or an identifier is taken only from its own kind of node, as serde_yaml
    // takes them (a struct from a list, or a field named by a number, it refuses). An empty plain
    // scalar serde_yaml reads as an empty list or map; this reading leaves it to serde_yaml.
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        match self {
            Node::List(_) => self.deserialize_any(visitor),
            _ => Err(Refused),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Refused> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Refused> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        match self {
            Node::Map(_) => self.deserialize_any(visitor),
            _ => Err(Refused),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Refused> {
        self.deserialize_map(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        match self {
            Node::Str(s) => visitor.visit_string(s),
            _ => Err(Refused),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Refused> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ReadLimits {
        crate::build::limits::ReadLimits::default()
    }

    /// `text` read the one-pass way and by serde_yaml, into JSON (where this way takes it).
    fn both(text: &str) -> Option<(serde_json::Value, serde_json::Value)> {
        let ours = read::<serde_json::Value>(text, &limits())?;
        let theirs = serde_yaml::from_str::<serde_json::Value>(text).expect("yaml");
        Some((ours, theirs))
    }

    /// Every scalar this reading resolves, it resolves as serde_yaml does.
    #[test]
    fn scalars_as_serde_yaml_reads_them() {
        let plain = [
            "",
            "~",
            "null",
            "Null",
            "NULL",
            "true",
            "True",
            "FALSE",
            "yes",
            "no",
            "0",
            "7",
            "-7",
            "007",
            "-007",
            "1.5",
            "-1.5",
            "1e3",
            "1.",
            "2d6",
            "-",
            "-x",
            "1_000",
            "18446744073709551615",
            "-9223372036854775808",
            "3.0",
            "6.02e23",
            "1e400",
            "a: b",
            "1/2",
            "12abc",
            "'q'",
            "\"0x1\"",
            "\"a\\tb\"",
        ];
        for text in plain {
            if let Some((ours, theirs)) = both(&format!("v: {text}\n")) {
                assert_eq!(ours, theirs, "{text:?}");
            }
        }
    }

    #[test]
    fn what_is_left_to_serde_yaml() {
        for text in [
            "a: &x 1\nb: *x\n",
            "a: !tag 1\n",
            "a: 0x10\n",
            "a: +1\n",
            "a: .inf\n",
            "# nothing\n",
            "a: [\n",
            "a: 1\n---\nb: 2\n",
            "a: 1\n]\n",
            "a: b\u{1e}c\n",
        ] {
            assert_eq!(value(text, &limits()), None, "{text:?}");
        }
        let deep = "[".repeat(10) + &"]".repeat(10);
        let shallow = ReadLimits {
            max_nesting: 5,
            ..limits()
        };
        assert_eq!(value(&deep, &shallow), None);
    }

    #[test]
    fn a_document_as_serde_yaml_reads_it() {
        let text = "id: x\nlist: [1, -2, 2.5, 'q', \"0x1\", null]\nmap:\n  k: |\n    two\n    lines\n  n: ~\n";
        let (ours, theirs) = both(text).expect("plain");
        assert_eq!(ours, theirs);
    }

    /// The bundled packs' sources and characters are plain: each is read in one pass (a rule
    /// that sent them the general way would cost `ocf sheet` a fifth of its instructions).
    #[test]
    fn the_bundled_files_take_the_one_pass() {
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"));
        let mut files = Vec::new();
        let mut folders = vec![root.join("packs"), root.join("characters")];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).expect("a folder").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|e| e == "yaml") {
                    files.push(path);
                }
            }
        }
        assert!(files.len() > 20, "{files:?}");
        let general: Vec<_> = files
            .iter()
            .filter(|path| {
                let text = std::fs::read_to_string(path).expect("a file");
                read::<serde_json::Value>(&text, &limits()).is_none()
            })
            .collect();
        assert!(general.is_empty(), "read the general way: {general:?}");
    }

    /// A struct from a list, or a field named by a number: serde_yaml refuses both, and so does
    /// this reading (a struct's visitor takes a list by position, and a number as a field's index).
    #[test]
    fn a_struct_only_from_a_map() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Copies {
            max: Option<u32>,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Type {
            copies: Copies,
        }
        for text in [
            "copies: []\n",
            "copies: { 0: 1 }\n",
            "copies: ~\n",
            "copies:\n",
        ] {
            assert!(read::<Type>(text, &limits()).is_none(), "{text:?}");
        }
        assert!(read::<Type>("copies: { max: 1 }\n", &limits()).is_some());
    }

    /// A key written twice reaches the type twice, as serde_yaml hands it: a map keeps the last.
    #[test]
    fn a_key_written_twice_as_serde_yaml_gives_it() {
        let (ours, theirs) = both("a: 1\nb: 2\na: 3\n").expect("plain");
        assert_eq!(ours, theirs);
    }
}

/// What the one-pass reading takes, serde_yaml reads the same: sample documents damaged with the
/// characters YAML gives meaning to, read both ways.
#[cfg(test)]
mod agreement {
    use proptest::prelude::*;

    use super::*;

    const SAMPLES: [&str; 6] = [
        include_str!("../../../../testdata/packs/5e-srd-5.1/content/monsters/goblin.yaml"),
        include_str!("../../../../testdata/packs/5e-srd-5.1/content/spells/bless.yaml"),
        include_str!("../../../../testdata/packs/5e-srd-5.1/content/classes/rogue.yaml"),
        include_str!("../../../../testdata/packs/5e-srd-5.1/rules/spellcasting.yaml"),
        include_str!("../../../../testdata/characters/monk-3-mage-armor.yaml"),
        include_str!("../../../../testdata/characters/goblin.yaml"),
    ];

    const MEANINGFUL: &[u8] = b"-?:,[]{}#&*!|>'\"%@` \t\n\\.0123456789+eE~aZ";

    fn damaged() -> impl Strategy<Value = String> {
        (
            0..SAMPLES.len(),
            prop::collection::vec((any::<prop::sample::Index>(), 0..MEANINGFUL.len()), 1..4),
        )
            .prop_map(|(sample, edits)| {
                let mut bytes = SAMPLES[sample].as_bytes().to_vec();
                for (at, with) in edits {
                    let at = at.index(bytes.len());
                    bytes[at] = MEANINGFUL[with];
                }
                String::from_utf8_lossy(&bytes).into_owned()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn taken_documents_read_as_serde_yaml_reads_them(text in damaged()) {
            let limits = ReadLimits::default();
            if let Some(ours) = read::<serde_json::Value>(&text, &limits) {
                let theirs = serde_yaml::from_str::<serde_json::Value>(&text);
                prop_assert!(theirs.is_ok(), "serde_yaml refuses what we took: {:?}", theirs);
                prop_assert_eq!(ours, theirs.unwrap());
            }
        }
    }
}
