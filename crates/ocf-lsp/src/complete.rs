//! Completion: inside a formula, field IDs, context roots and their members, and functions; in a
//! reference position, the names of the kind it takes (content IDs with their type); elsewhere,
//! the YAML keys valid at the cursor and a key's enum values, from the JSON Schemas.

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, Range, TextEdit,
};

use ocf_formula::{Function, Root};
use ocf_load::build::source::{Role, role_of};

use crate::db::{Pack, SourceFile, file_index};
use crate::names;
use crate::schema::{self, Step};
use crate::symbols::Kind;
use crate::world::World;
use crate::yaml::Span;

const MAX_ITEMS: usize = 500;

pub fn complete(world: &World, pack: Pack, file: SourceFile, offset: usize) -> Vec<CompletionItem> {
    if crate::translations::is_translation(world, file) {
        return crate::translations::complete(world, pack, file, offset);
    }
    let text = file.text(&world.db);
    let offset = crate::text::floor_boundary(text, offset.min(text.len()));
    let index = file_index(&world.db, file);
    for site in &index.symbols.formulas {
        let Some(whole) = site.text_span() else {
            continue;
        };
        // The cursor in the formula's text, however the scalar is written; or after it on its
        // line, past spaces YAML drops from a plain scalar's end (`1 + |`).
        let before = match site.value_offset(offset) {
            Some(at) => site.text[..at].to_owned(),
            None if offset > whole.end
                && text[whole.end..offset]
                    .chars()
                    .all(|c| c == ' ' || c == '\t') =>
            {
                format!("{}{}", site.text, &text[whole.end..offset])
            }
            None => continue,
        };
        return in_formula(world, pack, file, &before, offset, site.roots.as_deref());
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    let role = role_of(file.name(&world.db)).unwrap_or(Role::Content);
    let (mut path, mut current) = path_at(text, line_start, before);
    // Inside a flow collection (`tags: [a, b|]`, `{ item: | }`): the steps into it.
    if let Place::Value { key, prefix } = &current
        && let Some((steps, place)) = flow(prefix)
    {
        path.push(Step::Key(key.clone()));
        path.extend(steps);
        current = place;
    }
    let present = siblings(text, line_start, before);
    match current {
        Place::Value { key, prefix } if is_formula_place(role, &path, &key) => {
            // A formula not written yet (an empty value), or one the document does not read.
            in_formula(world, pack, file, &prefix, offset, None)
        }
        Place::Value { key, prefix } => {
            let word = Span {
                start: offset - prefix.len(),
                end: offset,
            };
            let mut full = path.clone();
            full.push(Step::Key(key.clone()));
            // An `id` item field's value names what its declaration's `of` says.
            if let Some(names) = item_field(world, pack, index, role, &path, &key, offset)
                .filter(|f| f.r#type == "id")
            {
                return names.complete(world, pack, file, &prefix, word);
            }
            if let Some(kind) = reference_kind(role, &path, &key, index, offset) {
                // `extends` and `override` name an item of the item's own type, when it has one;
                // `template` a template.
                let filter = match key.as_str() {
                    "extends" | "override" => item_type(index, offset).map(ContentFilter::OfType),
                    "template" => Some(ContentFilter::Templates),
                    _ => None,
                };
                let mut out = names_of(world, pack, file, kind, &prefix, word, filter.as_ref());
                // Not the item being written itself (the file's other items are offered).
                if kind == Kind::Content
                    && let Some(own) = item_at(index, offset)
                {
                    out.retain(|i| i.label != own);
                }
                return out;
            }
            let values = schema::enum_values(&schema::at(schema::root(role), &full));
            values
                .into_iter()
                .filter(|v| v.starts_with(&prefix))
                .map(|v| item(world, file, &v, CompletionItemKind::ENUM_MEMBER, None, word))
                .collect()
        }
        Place::Item { prefix } => {
            let word = Span {
                start: offset - prefix.len(),
                end: offset,
            };
            match path.last() {
                Some(Step::Key(key)) if key == "tags" || key.ends_with("Tags") => {
                    return names_of(world, pack, file, Kind::Tag, &prefix, word, None);
                }
                Some(Step::Key(key)) if key == "templates" => {
                    let filter = ContentFilter::Templates;
                    return names_of(
                        world,
                        pack,
                        file,
                        Kind::Content,
                        &prefix,
                        word,
                        Some(&filter),
                    );
                }
                Some(Step::Key(key)) if key == "hides" || key == "items" => {
                    return names_of(world, pack, file, Kind::Content, &prefix, word, None);
                }
                Some(Step::Key(key)) => {
                    // A `set` item field's elements name what its declaration's `of` says.
                    let parent = &path[..path.len() - 1];
                    if let Some(names) = item_field(world, pack, index, role, parent, key, offset)
                        .filter(|f| f.r#type == "set")
                    {
                        return names.complete(world, pack, file, &prefix, word);
                    }
                }
                _ => {}
            }
            let mut full = path.clone();
            full.push(Step::Item);
            let values = schema::enum_values(&schema::at(schema::root(role), &full));
            let mut out: Vec<CompletionItem> = values
                .into_iter()
                .filter(|v| v.starts_with(&prefix))
                .map(|v| item(world, file, &v, CompletionItemKind::ENUM_MEMBER, None, word))
                .collect();
            out.extend(keys(world, file, role, &full, &prefix, word));
            out
        }
        Place::Key { prefix } => {
            let word = Span {
                start: offset - prefix.len(),
                end: offset,
            };
            let mut out = keys(world, file, role, &path, &prefix, word);
            out.retain(|i| !present.contains(&i.label));
            out
        }
    }
}

fn keys(
    world: &World,
    file: SourceFile,
    role: Role,
    path: &[Step],
    prefix: &str,
    word: Span,
) -> Vec<CompletionItem> {
    schema::keys(&schema::at(schema::root(role), path))
        .into_iter()
        .filter(|(k, _)| k.starts_with(prefix))
        .map(|(k, doc)| {
            let mut item = item(
                world,
                file,
                &k,
                CompletionItemKind::PROPERTY,
                Some(doc),
                word,
            );
            item.insert_text = Some(format!("{k}: "));
            if let Some(CompletionTextEdit::Edit(edit)) = &mut item.text_edit {
                edit.new_text = format!("{k}: ");
            }
            item
        })
        .collect()
}

/// What a key's value names, when it is a reference: the build's walk says so for the references
/// it found in the file; a half-typed file falls back on the key.
fn reference_kind(
    role: Role,
    path: &[Step],
    key: &str,
    index: &crate::db::Indexed,
    offset: usize,
) -> Option<Kind> {
    if let Some(r) = index.symbols.refs.iter().find(|r| r.span.contains(offset)) {
        return Some(r.kind);
    }
    let in_item = match role {
        Role::Content => path.is_empty() || matches!(path, [Step::Item]),
        _ => false,
    };
    match key {
        "type" if in_item => Some(Kind::ContentType),
        "extends" | "override" => Some(Kind::Content),
        "use" => Some(Kind::Action),
        // An effect's target is a field, whatever else the effect has yet.
        "target" => Some(Kind::Field),
        "of" => Some(Kind::ContentType),
        _ => None,
    }
}

/// The declaration of the item field whose value the cursor is in: a content item's `fields: {
/// name: … }`, declared by the item's content type, else a template field (a template's values
/// name both, as loadRuleset qualifies them).
struct ItemField {
    r#type: String,
    of: Option<String>,
}

impl ItemField {
    /// What the value may name: fields for `of: field`, else content items of that type.
    fn complete(
        &self,
        world: &World,
        pack: Pack,
        file: SourceFile,
        prefix: &str,
        word: Span,
    ) -> Vec<CompletionItem> {
        match self.of.as_deref() {
            Some("field") => names_of(world, pack, file, Kind::Field, prefix, word, None),
            Some(of) => {
                let filter = ContentFilter::OfType(of.to_owned());
                names_of(
                    world,
                    pack,
                    file,
                    Kind::Content,
                    prefix,
                    word,
                    Some(&filter),
                )
            }
            None => names_of(world, pack, file, Kind::Content, prefix, word, None),
        }
    }
}

fn item_field(
    world: &World,
    pack: Pack,
    index: &crate::db::Indexed,
    role: Role,
    path: &[Step],
    name: &str,
    offset: usize,
) -> Option<ItemField> {
    let in_fields = matches!(
        path,
        [Step::Key(k)] | [Step::Item, Step::Key(k)] if k == "fields"
    );
    if role != Role::Content || !in_fields {
        return None;
    }
    let declared = |file: SourceFile, at: &str| {
        let index = file_index(&world.db, file);
        let member = |key: &str| {
            index
                .yaml
                .get(&format!("{at}/{key}"))
                .and_then(|n| n.scalar.clone())
        };
        Some(ItemField {
            r#type: member("type")?,
            of: member("of"),
        })
    };
    let name = crate::yaml::escape(name);
    if let Some(ty) = item_type(index, offset) {
        let own = names::visible(world, pack, Kind::ContentType)
            .into_iter()
            .filter(|t| local(&t.decl.id) == local(&ty))
            .find_map(|t| declared(t.file, &format!("{}/fields/{name}", t.decl.pointer)));
        if own.is_some() {
            return own;
        }
    }
    world.scope(pack).into_iter().find_map(|p| {
        p.files(&world.db)
            .iter()
            .find_map(|&f| declared(f, &format!("/templateFields/{name}")))
    })
}

/// An ID without its pack.
fn local(id: &str) -> &str {
    id.split_once(':').map_or(id, |(_, local)| local)
}

/// Which content items a reference takes.
enum ContentFilter {
    OfType(String),
    Templates,
}

/// The ID of the content item holding the cursor.
fn item_at(index: &crate::db::Indexed, offset: usize) -> Option<String> {
    index
        .symbols
        .decls
        .iter()
        .filter(|d| d.kind == Kind::Content)
        .find(|d| {
            index
                .yaml
                .get(&d.pointer)
                .is_some_and(|n| n.span.contains(offset))
        })
        .map(|d| d.id.clone())
}

/// The state keys and computed values `self` holds where the cursor is: the item's own, and its
/// content type's (in a content file), or the content type's around the cursor (in a rules file).
fn self_names(world: &World, pack: Pack, file: SourceFile, offset: usize) -> Vec<(String, String)> {
    let index = file_index(&world.db, file);
    let mut out: Vec<(String, String)> = Vec::new();
    let mut add = |indexed: &crate::db::Indexed, at: &str| {
        for (key, what) in [("state", "state key"), ("computed", "computed value")] {
            let pointer = format!("{at}/{key}");
            for child in indexed.yaml.children(&pointer) {
                if let Some((_, name)) = &child.key
                    && !out.iter().any(|(n, _)| n == name)
                {
                    out.push((name.clone(), what.to_owned()));
                }
            }
        }
    };
    let holding = |kind: Kind| {
        index
            .symbols
            .decls
            .iter()
            .filter(move |d| d.kind == kind)
            .find(|d| {
                index
                    .yaml
                    .get(&d.pointer)
                    .is_some_and(|n| n.span.contains(offset))
            })
    };
    if let Some(item) = holding(Kind::Content) {
        add(index, &item.pointer);
    }
    if let Some(ty) = holding(Kind::ContentType) {
        add(index, &ty.pointer);
    }
    if let Some(ty) = item_type(index, offset) {
        for t in names::visible(world, pack, Kind::ContentType)
            .into_iter()
            .filter(|t| local(&t.decl.id) == local(&ty))
        {
            add(file_index(&world.db, t.file), &t.decl.pointer);
        }
    }
    out
}

/// Whether the value of `key` at `path` is a formula, by the schemas.
fn is_formula_place(role: Role, path: &[Step], key: &str) -> bool {
    let mut full = path.to_vec();
    full.push(Step::Key(key.to_owned()));
    schema::at(schema::root(role), &full)
        .iter()
        .any(|s| schema::is_formula(s))
}

/// The steps into a flow collection from the text after its key's colon, and what the cursor at
/// its end is typing; `None` outside one.
pub fn flow(value: &str) -> Option<(Vec<Step>, Place)> {
    enum Frame {
        List,
        Map(Option<String>),
    }
    let value = value.trim_start();
    if !value.starts_with(['[', '{']) {
        return None;
    }
    let quotes = ['\'', '"'];
    let mut stack: Vec<Frame> = Vec::new();
    let mut token = String::new();
    for c in value.chars() {
        match c {
            '[' => {
                stack.push(Frame::List);
                token.clear();
            }
            '{' => {
                stack.push(Frame::Map(None));
                token.clear();
            }
            ']' | '}' => {
                stack.pop();
                token.clear();
            }
            ',' => {
                if let Some(Frame::Map(key)) = stack.last_mut() {
                    *key = None;
                }
                token.clear();
            }
            ':' if matches!(stack.last(), Some(Frame::Map(None))) => {
                let key = token.trim().trim_matches(quotes).to_owned();
                if let Some(Frame::Map(k)) = stack.last_mut() {
                    *k = Some(key);
                }
                token.clear();
            }
            _ => token.push(c),
        }
    }
    let (last, outer) = stack.split_last()?;
    let mut steps = Vec::new();
    for frame in outer {
        match frame {
            Frame::List => steps.push(Step::Item),
            Frame::Map(Some(key)) => steps.push(Step::Key(key.clone())),
            Frame::Map(None) => return None,
        }
    }
    let prefix = token.trim_start().trim_matches(quotes).to_owned();
    let place = match last {
        Frame::List => Place::Item { prefix },
        Frame::Map(Some(key)) => Place::Value {
            key: key.clone(),
            prefix,
        },
        Frame::Map(None) => Place::Key { prefix },
    };
    Some((steps, place))
}

/// The `type` of the content item holding the cursor.
fn item_type(index: &crate::db::Indexed, offset: usize) -> Option<String> {
    let item = index
        .symbols
        .decls
        .iter()
        .filter(|d| d.kind == Kind::Content)
        .find(|d| {
            index
                .yaml
                .get(&d.pointer)
                .is_some_and(|n| n.span.contains(offset))
        })?;
    let ty = index
        .yaml
        .get(&format!("{}/type", item.pointer))?
        .scalar
        .clone()?;
    (!ty.is_empty()).then_some(ty)
}

fn names_of(
    world: &World,
    pack: Pack,
    file: SourceFile,
    kind: Kind,
    prefix: &str,
    word: Span,
    filter: Option<&ContentFilter>,
) -> Vec<CompletionItem> {
    let mut out: Vec<CompletionItem> = Vec::new();
    for found in names::visible(world, pack, kind) {
        let id = &found.decl.id;
        if !id.starts_with(prefix) || out.iter().any(|i| &i.label == id) {
            continue;
        }
        if let Some(filter) = filter {
            let index = file_index(&world.db, found.file);
            let member = |key: &str| {
                index
                    .yaml
                    .get(&format!("{}/{key}", found.decl.pointer))
                    .and_then(|n| n.scalar.clone())
            };
            let fits = match filter {
                ContentFilter::OfType(ty) => member("type").is_none_or(|t| local(&t) == local(ty)),
                ContentFilter::Templates => member("template").as_deref() == Some("true"),
            };
            if !fits {
                continue;
            }
        }
        let detail = if kind == Kind::Content {
            let index = file_index(&world.db, found.file);
            let ty = index
                .yaml
                .get(&format!("{}/type", found.decl.pointer))
                .and_then(|n| n.scalar.clone())
                .filter(|t| !t.is_empty());
            Some(match ty {
                Some(ty) => format!("content item ({ty})"),
                None => "content item".to_owned(),
            })
        } else {
            Some(kind.noun().to_owned())
        };
        let mut item = item(world, file, id, symbol_kind(kind), None, word);
        item.detail = detail;
        out.push(item);
        if out.len() >= MAX_ITEMS {
            break;
        }
    }
    out
}

fn symbol_kind(kind: Kind) -> CompletionItemKind {
    match kind {
        Kind::Field => CompletionItemKind::FIELD,
        Kind::Content => CompletionItemKind::VALUE,
        Kind::ContentType => CompletionItemKind::CLASS,
        Kind::Tag => CompletionItemKind::CONSTANT,
        _ => CompletionItemKind::REFERENCE,
    }
}

fn item(
    world: &World,
    file: SourceFile,
    label: &str,
    kind: CompletionItemKind,
    doc: Option<String>,
    word: Span,
) -> CompletionItem {
    let range: Range = crate::ide::range(world, file, word);
    CompletionItem {
        label: label.to_owned(),
        kind: Some(kind),
        documentation: doc.filter(|d| !d.is_empty()).map(Documentation::String),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(
            range,
            label.to_owned(),
        ))),
        ..CompletionItem::default()
    }
}

/// Inside a formula: what is being typed is a dotted name (a field ID, a root and its members)
/// or a function's name.
fn in_formula(
    world: &World,
    pack: Pack,
    file: SourceFile,
    before: &str,
    offset: usize,
    bound: Option<&[Root]>,
) -> Vec<CompletionItem> {
    let prefix_len = before
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':'))
        .map(char::len_utf8)
        .sum::<usize>();
    let prefix = &before[before.len() - prefix_len..];
    let word = Span {
        start: offset - prefix_len,
        end: offset,
    };
    let mut out = Vec::new();
    if let Some((head, rest)) = prefix.split_once('.')
        && let Some(root) = Root::from_name(head)
        && !rest.contains('.')
    {
        // `self` also holds the copy's state keys and computed values.
        let declared = if root == Root::SelfCopy {
            self_names(world, pack, file, offset)
        } else {
            Vec::new()
        };
        let members = crate::docs::root(root)
            .1
            .iter()
            .map(|m| (m.to_string(), format!("member of `{head}`")))
            .chain(declared);
        for (member, detail) in members {
            let full = format!("{head}.{member}");
            if member.starts_with(rest) && !out.iter().any(|i: &CompletionItem| i.label == full) {
                let mut item = item(world, file, &full, CompletionItemKind::PROPERTY, None, word);
                item.detail = Some(detail);
                out.push(item);
            }
        }
    }
    for found in names::visible(world, pack, Kind::Field) {
        let id = &found.decl.id;
        if id.starts_with(prefix) && !out.iter().any(|i: &CompletionItem| &i.label == id) {
            let index = file_index(&world.db, found.file);
            let ty = index
                .yaml
                .get(&format!("{}/type", found.decl.pointer))
                .and_then(|n| n.scalar.clone());
            let mut item = item(world, file, id, CompletionItemKind::FIELD, None, word);
            item.detail = Some(ty.map_or("field".to_owned(), |t| format!("field: {t}")));
            out.push(item);
            if out.len() >= MAX_ITEMS {
                return out;
            }
        }
    }
    if !prefix.contains('.') {
        for root in Root::ALL {
            // Only the roots bound here, when the checker says which.
            if bound.is_some_and(|b| !b.contains(root)) {
                continue;
            }
            if root.as_str().starts_with(prefix) {
                let mut item = item(
                    world,
                    file,
                    root.as_str(),
                    CompletionItemKind::VARIABLE,
                    Some(crate::docs::root(*root).0.to_owned()),
                    word,
                );
                item.detail = Some("context root".to_owned());
                out.push(item);
            }
        }
        for function in Function::ALL {
            if function.as_str().starts_with(prefix) {
                let (signature, meaning) = crate::docs::function(*function);
                let mut item = item(
                    world,
                    file,
                    function.as_str(),
                    CompletionItemKind::FUNCTION,
                    Some(meaning.to_owned()),
                    word,
                );
                item.detail = Some(signature.to_owned());
                out.push(item);
            }
        }
    }
    out
}

/// Where the cursor is in the block structure: the keys and list items from the document's root
/// to the map or list holding it, found by indentation (so a half-typed file still has one), and
/// whether it is typing a key, a key's value or a list item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    Key { prefix: String },
    Value { key: String, prefix: String },
    Item { prefix: String },
}

pub fn path_at(text: &str, line_start: usize, before: &str) -> (Vec<Step>, Place) {
    let indent = before.len() - before.trim_start_matches(' ').len();
    let mut rest = &before[indent..];
    let mut steps_rev: Vec<Step> = Vec::new();
    let mut level = indent;
    let mut item = false;
    // `- ` items on the cursor's line: the cursor is inside the innermost.
    while let Some(after) = rest.strip_prefix("- ") {
        item = true;
        level += 2;
        rest = after;
        steps_rev.push(Step::Item);
    }
    let place = match rest.split_once(':') {
        Some((key, value)) if !key.contains(' ') || is_key(key) => Place::Value {
            key: key.trim().to_owned(),
            prefix: value.trim_start().trim_matches(['\'', '"']).to_owned(),
        },
        _ if item && !rest.is_empty() && rest == rest.trim() && steps_rev.len() == 1 => {
            steps_rev.clear();
            Place::Item {
                prefix: rest.to_owned(),
            }
        }
        _ => Place::Key {
            prefix: rest.trim().to_owned(),
        },
    };
    // A lone `- ` with nothing typed is an item too.
    let place = match place {
        Place::Key { prefix } if item && prefix.is_empty() && steps_rev.len() == 1 => {
            steps_rev.clear();
            Place::Item { prefix }
        }
        other => other,
    };
    let mut steps: Vec<Step> = steps_rev;
    // Typing a list item: the items above at its column are its siblings in the same list.
    let item_column = matches!(place, Place::Item { .. }).then_some(indent);
    // Walk the lines above, outwards.
    let mut pos = line_start;
    while pos > 0 {
        let end = pos - 1;
        let start = text[..end].rfind('\n').map_or(0, |i| i + 1);
        pos = start;
        let line = &text[start..end];
        let trimmed = line.trim_start_matches(' ');
        if trimmed.trim().is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let line_indent = line.len() - trimmed.len();
        let mut content = trimmed;
        let mut content_indent = line_indent;
        let mut dashes = 0;
        while let Some(after) = content.strip_prefix("- ") {
            content = after;
            content_indent += 2;
            dashes += 1;
        }
        if content == "-" {
            dashes += 1;
        }
        if dashes > 0 && item_column == Some(line_indent) && steps.is_empty() {
            continue;
        }
        if content_indent < level || (dashes > 0 && line_indent < level) {
            let key = content.split_once(':').map(|(k, _)| k.trim());
            // A line `- key: ...` at the cursor's level is an earlier key of the same item.
            if dashes > 0 && content_indent == level {
                steps.extend(std::iter::repeat_n(Step::Item, dashes));
                level = line_indent;
                continue;
            }
            match key {
                Some(key) if is_key(key) => {
                    steps.push(Step::Key(key.trim_matches(['\'', '"']).to_owned()));
                    steps.extend(std::iter::repeat_n(Step::Item, dashes));
                    level = line_indent;
                }
                _ => {
                    steps.extend(std::iter::repeat_n(Step::Item, dashes));
                    level = line_indent;
                }
            }
            if level == 0 {
                break;
            }
        } else if content_indent == level && dashes == 0 && level > 0 {
            // A sibling key: same map.
            continue;
        }
    }
    // A list written without indentation under its key (`key:` then `- item` at the same
    // column) is read by the key line above: the item step is already there.
    steps.reverse();
    (steps, place)
}

/// The keys already written in the block map holding the cursor's line: the lines at its
/// indentation, up and down to the first line indented less.
fn siblings(text: &str, line_start: usize, before: &str) -> Vec<String> {
    let indent = before.len() - before.trim_start_matches([' ', '-']).len();
    let mut out = Vec::new();
    let lines: Vec<&str> = text.split('\n').collect();
    let here = text[..line_start].matches('\n').count();
    let mut look = |range: &mut dyn Iterator<Item = usize>| {
        for i in range {
            let Some(line) = lines.get(i) else { break };
            let trimmed = line.trim_start_matches(' ');
            if trimmed.trim().is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let at = line.len() - trimmed.len();
            if at < indent {
                break;
            }
            if at == indent
                && let Some((key, _)) = trimmed.trim_start_matches("- ").split_once(':')
                && is_key(key)
            {
                out.push(key.trim().trim_matches(['\'', '"']).to_owned());
            }
        }
    };
    look(&mut (0..here).rev());
    look(&mut (here + 1..lines.len()));
    out
}

fn is_key(key: &str) -> bool {
    let key = key.trim().trim_matches(['\'', '"']);
    !key.is_empty()
        && !key.starts_with(['{', '[', '#'])
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '~' | '/'))
}
