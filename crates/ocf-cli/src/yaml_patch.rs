//! A character's YAML file patched to a new value, keeping what the author wrote: every node the
//! change leaves alone stays byte for byte (comments, quoting, order, blank lines), a changed
//! scalar is replaced where it stands, and a new map entry or list item is written as a small
//! block in the file's indentation (or in brackets beside siblings written so). Where a node
//! can't be patched safely (a collection in brackets that changes shape, a block scalar, a
//! node that changes kind) that node alone is written again.
//!
//! The patch is worked out between three values: the file's text as written (`T`), the
//! character it reads as (`M`, as the model writes it) and the new character (`N`). Where `M`
//! and `N` agree, the text stays as written whatever its form; where they differ, the text is
//! made to say `N`. The text made is read back and must give the character that writing `N`
//! whole gives; when it doesn't, [`patched`] says so and the caller writes `N` whole.

use saphyr_parser::{Event, Parser, ScalarStyle};
use serde_yaml::{Mapping, Value};

/// The text of the character file `text` (YAML) patched to say `new`, or why not.
pub fn patched(text: &str, new: &ocf_model::Character) -> Result<String, String> {
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    };
    let old = read(text).map_err(|e| format!("the file doesn't read: {e}"))?;
    let m = serde_yaml::to_value(&old).map_err(|e| e.to_string())?;
    let n = serde_yaml::to_value(new).map_err(|e| e.to_string())?;
    let t: Value = serde_yaml::from_str(body).map_err(|e| e.to_string())?;
    let root = tree(body)?;
    let width = body.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut patch = Patch {
        text: body,
        edits: Vec::new(),
        width: width.max(100),
    };
    patch
        .node(&root, &t, Some(&m), &n, Context::Root)
        .map_err(|Reemit| "the document changes kind".to_owned())?;
    let newline = if body.contains("\r\n") { "\r\n" } else { "\n" };
    let out = format!("{bom}{}", patch.apply(newline)?);
    // What the patch made must read as what writing the character whole reads as.
    let whole = serde_yaml::to_string(new).map_err(|e| e.to_string())?;
    let expected = read(&whole).map_err(|e| format!("the whole text doesn't read: {e}"))?;
    match read(&out) {
        Ok(got) if got == expected => Ok(out),
        Ok(_) => Err("the patched text reads as another character".to_owned()),
        Err(e) => Err(format!("the patched text doesn't read: {e}")),
    }
}

/// The character `text` reads as, as `ocf` reads a character file.
fn read(text: &str) -> Result<ocf_model::Character, String> {
    ocf_load::character::read_character(
        text.as_bytes().to_vec(),
        "character",
        ocf_load::character::Format::Yaml,
        &ocf_load::build::ReadLimits::default(),
    )
    .map(|file| file.character)
    .map_err(|p| format!("{}: {}", p.code, p.message))
}

/// A node of the text: where it is written (byte offsets) and what it holds.
#[derive(Debug)]
struct Node {
    start: usize,
    /// Just past its last character written (for a map or list in blocks, its last child's).
    end: usize,
    kind: Kind,
    /// In brackets, or inside a collection in brackets.
    flow: bool,
}

#[derive(Debug)]
enum Kind {
    /// A scalar on one line, written plain or quoted: it can be replaced where it stands.
    Scalar,
    /// A block scalar (`|`, `>`), a scalar over several lines, an empty one, one with an anchor
    /// or a tag, or an alias: only written again with its entry.
    Fixed,
    Map(Vec<(Node, Node)>),
    /// A list, each item with where its `- ` is written in blocks.
    Seq(Vec<(Option<usize>, Node)>),
}

/// A node that can't be patched where it stands: its parent writes it again.
struct Reemit;

#[derive(Clone, Copy, PartialEq)]
enum Context {
    Root,
    /// A block map's value or a block list's item.
    Block,
    Flow,
}

/// The text's tree, from the parser's events (positions in characters made byte offsets).
fn tree(text: &str) -> Result<Node, String> {
    let offsets: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect();
    let byte = |index: usize| offsets.get(index).copied().unwrap_or(text.len());
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Open> = Vec::new();
    let mut previous_end = 0;
    let mut root = None;
    while let Some(event) = parser.next_event() {
        let (event, span) = event.map_err(|e| e.info().to_owned())?;
        let (start, end) = (byte(span.start.index()), byte(span.end.index()));
        let in_flow = stack.last().is_some_and(|open| open.flow);
        let node = match event {
            Event::Scalar(_, style, anchor, tag) => {
                let written = &text[start..end];
                let kind = match style {
                    ScalarStyle::Literal | ScalarStyle::Folded => Kind::Fixed,
                    // An anchor or a tag stays with the text it is written before.
                    _ if anchor != 0 || tag.is_some() => Kind::Fixed,
                    _ if start == end || written.contains('\n') => Kind::Fixed,
                    _ => Kind::Scalar,
                };
                let (start, end) = match style {
                    ScalarStyle::Literal | ScalarStyle::Folded => {
                        (start, start + written.trim_end().len())
                    }
                    _ if start == end => (previous_end, previous_end),
                    // In brackets, a scalar's span may run on over the spaces after it.
                    _ => (start, start + written.trim_end().len()),
                };
                Some(Node {
                    start,
                    end,
                    kind,
                    flow: in_flow,
                })
            }
            Event::Alias(_) => Some(Node {
                start,
                end,
                kind: Kind::Fixed,
                flow: in_flow,
            }),
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                let flow = in_flow || text[start..].starts_with(['[', '{']);
                let seq = matches!(event, Event::SequenceStart(..));
                stack.push(Open {
                    start,
                    flow,
                    seq,
                    children: Vec::new(),
                });
                previous_end = start;
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(Open {
                    start,
                    flow,
                    seq,
                    children,
                }) = stack.pop()
                else {
                    continue;
                };
                let end = if flow {
                    start.max(byte(span.start.index()) + 1)
                } else {
                    children.last().map_or(start, |c| c.end)
                };
                let kind = if seq {
                    Kind::Seq(
                        children
                            .into_iter()
                            .map(|child| {
                                let dash = (!flow).then(|| dash(text, child.start)).flatten();
                                (dash, child)
                            })
                            .collect(),
                    )
                } else {
                    let mut entries = Vec::new();
                    let mut children = children.into_iter();
                    while let (Some(k), Some(v)) = (children.next(), children.next()) {
                        entries.push((k, v));
                    }
                    Kind::Map(entries)
                };
                Some(Node {
                    start,
                    end,
                    kind,
                    flow,
                })
            }
            Event::DocumentEnd => break,
            _ => None,
        };
        if let Some(node) = node {
            previous_end = node.end;
            match stack.last_mut() {
                Some(open) => open.children.push(node),
                None => root = Some(node),
            }
        }
    }
    root.ok_or_else(|| "the file has no node".to_owned())
}

/// A map or list being read: where it starts, whether in brackets (or inside brackets), and its
/// children so far (a map's keys and values in turn).
struct Open {
    start: usize,
    flow: bool,
    seq: bool,
    children: Vec<Node>,
}

/// Where the `- ` of the block list item starting at `start` is: back over spaces and line
/// breaks to a `-`.
fn dash(text: &str, start: usize) -> Option<usize> {
    let before = text[..start].trim_end_matches([' ', '\n', '\r']);
    before.ends_with('-').then(|| before.len() - 1)
}

/// The start of the line holding `at`.
fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// Just past the line break ending the line holding the character before `at` (the text's end if
/// it has none).
fn line_end(text: &str, at: usize) -> usize {
    text[at..].find('\n').map_or(text.len(), |i| at + i + 1)
}

/// Whether only spaces stand before `at` on its line.
fn first_on_line(text: &str, at: usize) -> bool {
    text[line_start(text, at)..at].bytes().all(|b| b == b' ')
}

/// `at`'s column, in characters.
fn column(text: &str, at: usize) -> usize {
    text[line_start(text, at)..at].chars().count()
}

struct Edit {
    start: usize,
    end: usize,
    text: String,
}

struct Patch<'a> {
    text: &'a str,
    edits: Vec<Edit>,
    /// How long a line written in brackets may be: 100 characters, or the file's longest line.
    width: usize,
}

impl Patch<'_> {
    fn edit(&mut self, start: usize, end: usize, text: String) {
        self.edits.push(Edit { start, end, text });
    }

    /// The text with every edit made (each made with `newline` for its line breaks).
    fn apply(mut self, newline: &str) -> Result<String, String> {
        // Stable: insertions at one place stay in the order they were made.
        self.edits.sort_by_key(|e| e.start);
        let mut out = String::with_capacity(self.text.len());
        let mut at = 0;
        for edit in &self.edits {
            if edit.start < at {
                return Err("two edits overlap".to_owned());
            }
            out.push_str(&self.text[at..edit.start]);
            if newline == "\n" {
                out.push_str(&edit.text);
            } else {
                out.push_str(&edit.text.replace('\n', newline));
            }
            at = edit.end;
        }
        out.push_str(&self.text[at..]);
        Ok(out)
    }

    /// Makes node `node` (whose value is `t`, read by the model as `m`) say `n`.
    fn node(
        &mut self,
        node: &Node,
        t: &Value,
        m: Option<&Value>,
        n: &Value,
        context: Context,
    ) -> Result<(), Reemit> {
        if t == n || m == Some(n) {
            return Ok(());
        }
        match (&node.kind, t, n) {
            (Kind::Scalar, _, _) if is_scalar(n) => {
                let text = scalar(n, node.flow);
                self.edit(node.start, node.end, text);
                Ok(())
            }
            (Kind::Map(entries), Value::Mapping(tm), Value::Mapping(nm))
                if tm.len() == entries.len() =>
            {
                let mm = m.and_then(Value::as_mapping);
                if node.flow {
                    self.flow(node, context, n, |patch| {
                        patch.flow_map(entries, tm, mm, nm)
                    })
                } else {
                    self.block_map(node, entries, tm, mm, nm)
                }
            }
            (Kind::Seq(items), Value::Sequence(ts), Value::Sequence(ns))
                if ts.len() == items.len() =>
            {
                let ms = m
                    .and_then(Value::as_sequence)
                    .filter(|ms| ms.len() == ts.len());
                if node.flow {
                    self.flow(node, context, n, |patch| patch.flow_seq(items, ts, ms, ns))
                } else if ns.is_empty() {
                    Err(Reemit)
                } else {
                    self.block_seq(items, ts, ms, ns)
                }
            }
            _ => Err(Reemit),
        }
    }

    /// A collection in brackets: patched inside when it keeps its shape, else written again in
    /// brackets (or, too long for a line in a block, by its parent in blocks).
    fn flow(
        &mut self,
        node: &Node,
        context: Context,
        n: &Value,
        inside: impl FnOnce(&mut Self) -> Result<(), Reemit>,
    ) -> Result<(), Reemit> {
        let mark = self.edits.len();
        if inside(self).is_ok() {
            return Ok(());
        }
        self.edits.truncate(mark);
        if context == Context::Flow {
            return Err(Reemit);
        }
        let text = flow(n);
        if text.chars().count() + column(self.text, node.start) > self.width && has_collections(n) {
            return Err(Reemit);
        }
        self.edit(node.start, node.end, text);
        Ok(())
    }

    fn flow_map(
        &mut self,
        entries: &[(Node, Node)],
        t: &Mapping,
        m: Option<&Mapping>,
        n: &Mapping,
    ) -> Result<(), Reemit> {
        for ((_, value), (key, tv)) in entries.iter().zip(t) {
            match n.get(key) {
                Some(nv) => self.node(value, tv, m.and_then(|m| m.get(key)), nv, Context::Flow)?,
                None if m.is_some_and(|m| m.contains_key(key)) => return Err(Reemit),
                None => {}
            }
        }
        if n.iter()
            .any(|(key, nv)| !t.contains_key(key) && !unchanged(m, key, nv))
        {
            return Err(Reemit);
        }
        Ok(())
    }

    fn flow_seq(
        &mut self,
        items: &[(Option<usize>, Node)],
        t: &[Value],
        m: Option<&Vec<Value>>,
        n: &[Value],
    ) -> Result<(), Reemit> {
        if t.len() != n.len() {
            return Err(Reemit);
        }
        for (i, ((_, item), tv)) in items.iter().zip(t).enumerate() {
            self.node(item, tv, m.map(|m| &m[i]), &n[i], Context::Flow)?;
        }
        Ok(())
    }

    fn block_map(
        &mut self,
        node: &Node,
        entries: &[(Node, Node)],
        t: &Mapping,
        m: Option<&Mapping>,
        n: &Mapping,
    ) -> Result<(), Reemit> {
        let text = self.text;
        let indent = column(text, entries.first().map_or(node.start, |e| e.0.start));
        let kept = entries
            .iter()
            .zip(t)
            .filter(|(_, (key, _))| {
                n.contains_key(*key) || !m.is_some_and(|m| m.contains_key(*key))
            })
            .count();
        if kept == 0 {
            return Err(Reemit);
        }
        for (i, ((key_node, value), (key, tv))) in entries.iter().zip(t).enumerate() {
            let end = line_end(text, value.end);
            match n.get(key) {
                Some(nv) => {
                    let mv = m.and_then(|m| m.get(key));
                    let mark = self.edits.len();
                    if self.node(value, tv, mv, nv, Context::Block).is_err() {
                        self.edits.truncate(mark);
                        let key_text = &text[key_node.start..key_node.end];
                        let entry = format!("{key_text}:{}", after_key(nv, indent));
                        self.edit(key_node.start, end, entry);
                    }
                }
                None if !m.is_some_and(|m| m.contains_key(key)) => {}
                None if first_on_line(text, key_node.start) => {
                    self.edit(line_start(text, key_node.start), end, String::new());
                }
                // The first key after a list item's `- `: the next key moves up to its place.
                None => match entries.get(i + 1) {
                    Some((next, _)) => self.edit(key_node.start, next.start, String::new()),
                    None => return Err(Reemit),
                },
            }
        }
        let added: String = n
            .iter()
            .filter(|(key, nv)| !t.contains_key(*key) && !unchanged(m, key, nv))
            .map(|(key, nv)| {
                format!(
                    "{}{}:{}",
                    " ".repeat(indent),
                    scalar(key, false),
                    after_key(nv, indent)
                )
            })
            .collect();
        if !added.is_empty() {
            let at = line_end(text, node.end);
            let lead = if at == text.len() && !text.ends_with('\n') {
                "\n"
            } else {
                ""
            };
            self.edit(at, at, format!("{lead}{added}"));
        }
        Ok(())
    }

    fn block_seq(
        &mut self,
        items: &[(Option<usize>, Node)],
        t: &[Value],
        m: Option<&Vec<Value>>,
        n: &[Value],
    ) -> Result<(), Reemit> {
        let text = self.text;
        // Every item's `- ` first on its line, for items to be removed and added around them.
        let dashes: Vec<usize> = items
            .iter()
            .map(|(dash, _)| dash.filter(|d| first_on_line(text, *d)))
            .collect::<Option<_>>()
            .ok_or(Reemit)?;
        if t.len().saturating_mul(n.len()) > 4_000_000 {
            return Err(Reemit);
        }
        let indent = column(text, dashes[0]);
        let equal = |i: usize, j: usize| t[i] == n[j] || m.is_some_and(|m| m[i] == n[j]);
        let pairs = common(t.len(), n.len(), |i, j| {
            equal(i, j) || same_id(&t[i], &n[j])
        });
        let flow_siblings = items.iter().any(|(_, item)| item.flow);
        let width = self.width;
        // Between two kept items, the items left out and the new ones: taken in pairs while
        // they are alike (one item changed in place, its comments kept), then the new ones
        // written before the next item and the others removed. A new item equal to one
        // removed elsewhere (moved) is that item's own text.
        let (mut ti, mut nj) = (0, 0);
        let removed: Vec<usize> = {
            let kept: std::collections::HashSet<usize> = pairs.iter().map(|p| p.0).collect();
            (0..t.len()).filter(|i| !kept.contains(i)).collect()
        };
        for &(pi, pj) in pairs.iter().chain(std::iter::once(&(t.len(), n.len()))) {
            let mut k = 0;
            while ti + k < pi && nj + k < pj && alike(&t[ti + k], &n[nj + k]) {
                self.keep(
                    &items[ti + k].1,
                    dashes[ti + k],
                    indent,
                    &t[ti + k],
                    m.map(|m| &m[ti + k]),
                    &n[nj + k],
                );
                k += 1;
            }
            let at = if ti + k < pi {
                line_start(text, dashes[ti + k])
            } else if pi < t.len() {
                line_start(text, dashes[pi])
            } else {
                items.last().map_or(0, |(_, node)| line_end(text, node.end))
            };
            let new: String = (nj + k..pj)
                .map(|j| match removed.iter().find(|&&i| equal(i, j)) {
                    Some(&i) => {
                        let written = &text[dashes[i]..line_end(text, items[i].1.end)];
                        let lead = " ".repeat(indent);
                        if written.ends_with('\n') {
                            format!("{lead}{written}")
                        } else {
                            format!("{lead}{written}\n")
                        }
                    }
                    None => format!(
                        "{}- {}",
                        " ".repeat(indent),
                        item(&n[j], indent + 2, flow_siblings, width)
                    ),
                })
                .collect();
            if !new.is_empty() {
                let lead = if at == text.len() && !text.ends_with('\n') {
                    "\n"
                } else {
                    ""
                };
                self.edit(at, at, format!("{lead}{new}"));
            }
            for i in ti + k..pi {
                let end = line_end(text, items[i].1.end);
                self.edit(line_start(text, dashes[i]), end, String::new());
            }
            if pi < t.len() {
                self.keep(
                    &items[pi].1,
                    dashes[pi],
                    indent,
                    &t[pi],
                    m.map(|m| &m[pi]),
                    &n[pj],
                );
            }
            (ti, nj) = (pi + 1, pj + 1);
        }
        Ok(())
    }

    /// A list item kept, patched to say `n`, else written again after its `- `.
    fn keep(
        &mut self,
        node: &Node,
        dash: usize,
        indent: usize,
        t: &Value,
        m: Option<&Value>,
        n: &Value,
    ) {
        let mark = self.edits.len();
        if self.node(node, t, m, n, Context::Block).is_err() {
            self.edits.truncate(mark);
            let written = item(n, indent + 2, node.flow, self.width);
            self.edit(dash, line_end(self.text, node.end), format!("- {written}"));
        }
    }
}

/// Two items one may stand for the other, changed in place: both maps without an `id` (a copy
/// with another ID is another copy), both lists, or both scalars.
fn alike(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Mapping(x), Value::Mapping(y)) => !x.contains_key("id") && !y.contains_key("id"),
        (Value::Sequence(_), Value::Sequence(_)) => true,
        _ => is_scalar(a) && is_scalar(b),
    }
}

/// Whether the model gives `key` the value `n` already (a default the file leaves out).
fn unchanged(m: Option<&Mapping>, key: &Value, n: &Value) -> bool {
    m.and_then(|m| m.get(key)) == Some(n)
}

/// Two maps naming the same `id`: one item changed, not one removed and another added.
fn same_id(a: &Value, b: &Value) -> bool {
    match (a.get("id"), b.get("id")) {
        (Some(x), Some(y)) => x == y && !x.is_null(),
        _ => false,
    }
}

/// The longest common subsequence of `0..a` and `0..b` under `same`, as index pairs in order.
fn common(a: usize, b: usize, same: impl Fn(usize, usize) -> bool) -> Vec<(usize, usize)> {
    let mut lengths = vec![vec![0u32; b + 1]; a + 1];
    for i in (0..a).rev() {
        for j in (0..b).rev() {
            lengths[i][j] = if same(i, j) {
                lengths[i + 1][j + 1] + 1
            } else {
                lengths[i + 1][j].max(lengths[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut pairs) = (0, 0, Vec::new());
    while i < a && j < b {
        if same(i, j) {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if lengths[i + 1][j] >= lengths[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Mapping(_) | Value::Sequence(_) | Value::Tagged(_))
}

fn has_collections(v: &Value) -> bool {
    match v {
        Value::Mapping(m) => m.values().any(|v| !is_scalar(v)),
        Value::Sequence(s) => s.iter().any(|v| !is_scalar(v)),
        _ => false,
    }
}

/// A scalar on one line: as serde_yaml writes it in blocks; in brackets, a string quoted unless
/// it is plainly a word.
fn scalar(v: &Value, flow: bool) -> String {
    if let Value::String(s) = v {
        let plain_word = !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '/' | '+'));
        if flow && !plain_word {
            return quoted(s);
        }
    }
    match serde_yaml::to_string(v) {
        Ok(text) if !text.trim_end().contains('\n') && !text.starts_with(['|', '>']) => {
            text.trim_end().to_owned()
        }
        _ => match v {
            Value::String(s) => quoted(s),
            _ => serde_json::to_string(v).unwrap_or_default(),
        },
    }
}

/// A string in single quotes, or as JSON (double quotes, escapes) when it holds a quote or a
/// control character.
fn quoted(s: &str) -> String {
    if s.chars().any(|c| c == '\'' || c.is_control()) {
        serde_json::to_string(s).unwrap_or_default()
    } else {
        format!("'{s}'")
    }
}

/// A value in brackets on one line.
fn flow(v: &Value) -> String {
    match v {
        Value::Mapping(m) if m.is_empty() => "{}".to_owned(),
        Value::Mapping(m) => {
            let entries: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", scalar(k, true), flow(v)))
                .collect();
            format!("{{ {} }}", entries.join(", "))
        }
        Value::Sequence(s) => {
            let items: Vec<String> = s.iter().map(flow).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Tagged(tagged) => flow(&tagged.value),
        _ => scalar(v, true),
    }
}

/// What follows `key:` for a value whose key is at column `indent`, through its last line break.
fn after_key(v: &Value, indent: usize) -> String {
    match v {
        Value::Mapping(m) if !m.is_empty() => format!("\n{}", block_map(m, indent + 2)),
        Value::Sequence(s) if !s.is_empty() => format!("\n{}", block_seq(s, indent + 2)),
        _ if is_scalar(v) => format!(" {}\n", scalar(v, false)),
        _ => format!(" {}\n", flow(v)),
    }
}

fn block_map(m: &Mapping, indent: usize) -> String {
    m.iter()
        .map(|(k, v)| {
            format!(
                "{}{}:{}",
                " ".repeat(indent),
                scalar(k, false),
                after_key(v, indent)
            )
        })
        .collect()
}

fn block_seq(s: &[Value], indent: usize) -> String {
    s.iter()
        .map(|v| format!("{}- {}", " ".repeat(indent), item(v, indent + 2, false, 0)))
        .collect()
}

/// A list item after its `- `, its further lines at column `indent`: in brackets when its
/// siblings are and it fits on the line.
fn item(v: &Value, indent: usize, flow_siblings: bool, width: usize) -> String {
    if flow_siblings {
        let text = flow(v);
        if indent + text.chars().count() <= width {
            return format!("{text}\n");
        }
    }
    match v {
        Value::Mapping(m) if !m.is_empty() => block_map(m, indent)[indent..].to_owned(),
        Value::Sequence(s) if !s.is_empty() => block_seq(s, indent)[indent..].to_owned(),
        _ if is_scalar(v) => format!("{}\n", scalar(v, false)),
        _ => format!("{}\n", flow(v)),
    }
}
