//! The requests' answers, in protocol types: hover, definition, references, document symbols and
//! formatting. Completion is in [`crate::complete`].

use lsp_types::{
    DocumentSymbol, Hover, HoverContents, Location, MarkupContent, MarkupKind, Range, SymbolKind,
    TextEdit, Url,
};

use crate::db::{Pack, SourceFile, file_index};
use crate::names::{self, Found, Target};
use crate::symbols::Kind;
use crate::world::World;
use crate::yaml::{NodeKind, Span, YamlIndex};

pub fn range(world: &World, file: SourceFile, span: Span) -> Range {
    let text = file.text(&world.db);
    let lines = &file_index(&world.db, file).lines;
    Range::new(
        lines.position(text, span.start),
        lines.position(text, span.end),
    )
}

pub fn location(world: &World, file: SourceFile, span: Span) -> Option<Location> {
    let path = world.path_of(file)?;
    Some(Location::new(
        Url::from_file_path(path).ok()?,
        range(world, file, span),
    ))
}

pub fn hover(world: &World, pack: Pack, file: SourceFile, offset: usize) -> Option<Hover> {
    if crate::translations::is_translation(world, file) {
        return crate::translations::hover(world, pack, file, offset);
    }
    let Some(target) = names::target_at(world, file, offset) else {
        return key_hover(world, file, offset);
    };
    let (markdown, span) = match &target {
        Target::Function { function, span } => {
            let (signature, meaning) = crate::docs::function(*function);
            (format!("```\n{signature}\n```\nfunction: {meaning}"), *span)
        }
        Target::Root { root, span } => {
            let (meaning, members) = crate::docs::root(*root);
            let mut text = format!("```\n{}\n```\ncontext root: {meaning}", root.as_str());
            let index = file_index(&world.db, file);
            let here = index
                .symbols
                .formulas
                .iter()
                .find(|f| f.span.contains(offset));
            let in_list_function = *root == ocf_formula::Root::X
                && here.is_some_and(|f| {
                    f.value_offset(offset)
                        .is_some_and(|at| names::x_bound_at(&f.text, at))
                });
            match here.and_then(|f| f.roots.as_ref()) {
                _ if in_list_function => text.push_str(
                    "\n\nbound in this formula: each element of the list function's list",
                ),
                Some(roots) if roots.contains(root) => text.push_str("\n\nbound in this formula"),
                Some(_) => text.push_str("\n\n**not bound in this formula** (`unknown-name`)"),
                None => {}
            }
            if !members.is_empty() {
                text.push_str(&format!(
                    "\n\nmembers: {}",
                    members
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            (text, *span)
        }
        Target::Name { kind, id, span } => {
            let found = names::declarations(world, pack, *kind, id);
            let mut text = format!("{} `{id}`", kind.noun());
            match found.first() {
                None => text.push_str("\n\nnot declared in the pack or its dependencies"),
                Some(first) => {
                    if let Some(name) = crate::translations::name_of(world, pack, *kind, id, first)
                    {
                        text.push_str(&format!("\n\nname: **{name}**"));
                    }
                    text.push_str(&describe(world, first));
                }
            }
            (text, *span)
        }
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(range(world, file, span)),
    })
}

/// Where a declaration is, then what its node says (its scalar members, and lists of scalars).
fn describe(world: &World, found: &Found) -> String {
    let index = file_index(&world.db, found.file);
    let pack = world.pack_id(found.pack).unwrap_or_default();
    let line = index
        .lines
        .position(found.file.text(&world.db), found.decl.span.start)
        .line
        + 1;
    let mut out = format!(
        "\n\ndeclared in `{pack}`, {}:{line}",
        found.file.name(&world.db)
    );
    let summary = summary(&index.yaml, &found.decl.pointer, found.decl.kind);
    if !summary.is_empty() {
        out.push_str(&format!("\n```yaml\n{summary}```"));
    }
    out
}

/// The declaration's direct members: `key: value` for scalars, `key: [a, b]` for lists of
/// scalars, `key: {…}` otherwise.
fn summary(index: &YamlIndex, pointer: &str, kind: Kind) -> String {
    if kind == Kind::Tag {
        return String::new();
    }
    let mut out = String::new();
    let prefix = format!("{pointer}/");
    for node in &index.nodes {
        let Some(rest) = node.pointer.strip_prefix(&prefix) else {
            continue;
        };
        if rest.contains('/') {
            continue;
        }
        let key = crate::yaml::unescape(rest);
        let value = match node.kind {
            NodeKind::Scalar => node.scalar.clone().unwrap_or_default(),
            NodeKind::List => {
                let items: Vec<String> = index
                    .nodes
                    .iter()
                    .filter(|n| {
                        n.pointer
                            .strip_prefix(&format!("{}/", node.pointer))
                            .is_some_and(|r| !r.contains('/'))
                    })
                    .map(|n| n.scalar.clone().unwrap_or_else(|| "{…}".to_owned()))
                    .collect();
                format!("[{}]", items.join(", "))
            }
            NodeKind::Map => "{…}".to_owned(),
            NodeKind::Alias => "*alias".to_owned(),
        };
        out.push_str(&format!("{key}: {value}\n"));
        if out.len() > 2000 {
            out.push_str("…\n");
            break;
        }
    }
    out
}

pub fn definition(world: &World, pack: Pack, file: SourceFile, offset: usize) -> Vec<Location> {
    if crate::translations::is_translation(world, file) {
        return crate::translations::definition(world, pack, file, offset);
    }
    let Some(Target::Name { kind, id, .. }) = names::target_at(world, file, offset) else {
        return Vec::new();
    };
    names::declarations(world, pack, kind, &id)
        .iter()
        .filter_map(|f| location(world, f.file, f.decl.span))
        .collect()
}

pub fn references(
    world: &World,
    pack: Pack,
    file: SourceFile,
    offset: usize,
    include_declaration: bool,
) -> Vec<Location> {
    let Some(Target::Name { kind, id, .. }) = names::target_at(world, file, offset) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for found in names::declarations(world, pack, kind, &id) {
        if include_declaration {
            out.extend(location(world, found.file, found.decl.span));
        }
        for (file, span) in names::references(world, &found) {
            out.extend(location(world, file, span));
        }
    }
    out
}

#[allow(deprecated)]
pub fn document_symbols(world: &World, file: SourceFile) -> Vec<DocumentSymbol> {
    let index = file_index(&world.db, file);
    index
        .symbols
        .decls
        .iter()
        .map(|decl| {
            let whole = index.yaml.get(&decl.pointer).map_or(decl.span, |n| Span {
                start: n.key.as_ref().map_or(n.span.start, |(k, _)| k.start),
                end: n.span.end,
            });
            let whole = Span {
                start: whole.start.min(decl.span.start),
                end: whole.end.max(decl.span.end),
            };
            DocumentSymbol {
                name: decl.id.clone(),
                detail: Some(decl.kind.noun().to_owned()),
                kind: match decl.kind {
                    Kind::Field => SymbolKind::FIELD,
                    Kind::Content => SymbolKind::OBJECT,
                    Kind::ContentType => SymbolKind::CLASS,
                    Kind::Tag => SymbolKind::CONSTANT,
                    Kind::Action | Kind::FollowUp => SymbolKind::FUNCTION,
                    Kind::Situational => SymbolKind::BOOLEAN,
                    _ => SymbolKind::STRUCT,
                },
                tags: None,
                deprecated: None,
                range: range(world, file, whole),
                selection_range: range(world, file, decl.span),
                children: None,
            }
        })
        .collect()
}

/// The file's formulas in the standard printer's canonical text, where the text is written as
/// is on one line and the printed text can stand in the same place (the same quotes, or plain
/// text YAML reads back unchanged).
pub fn format(world: &World, file: SourceFile, only: Option<Span>) -> Vec<TextEdit> {
    let index = file_index(&world.db, file);
    let text = file.text(&world.db);
    let mut edits = Vec::new();
    for site in &index.symbols.formulas {
        let Some(start) = site.text_start else {
            continue;
        };
        if let Some(only) = only
            && (site.span.end < only.start || site.span.start > only.end)
        {
            continue;
        }
        let parse = ocf_syntax::parse(&site.text);
        let Some(printed) = ocf_syntax::printer::print_formula(&parse) else {
            continue;
        };
        if printed == site.text {
            continue;
        }
        let quote = text[..start].chars().next_back();
        let fits = match quote {
            Some('\'') if start > site.span.start => !printed.contains('\''),
            Some('"') if start > site.span.start => !printed.contains(['"', '\\']),
            _ => plain_safe(&printed),
        };
        if fits {
            let span = Span {
                start,
                end: start + site.text.len(),
            };
            edits.push(TextEdit::new(range(world, file, span), printed));
        }
    }
    edits
}

/// Whether YAML reads `text` back as the same plain scalar (conservatively).
fn plain_safe(text: &str) -> bool {
    let first = text.chars().next();
    !(text.is_empty()
        || text.contains(": ")
        || text.contains(" #")
        || text.ends_with(':')
        || text.contains(['\n', '\t'])
        || first.is_some_and(|c| "-?:,[]{}#&*!|>'\"%@`".contains(c))
        || matches!(text, "true" | "false" | "null" | "~")
        || text.parse::<f64>().is_ok())
}

/// The steps from the document's root to the node at `pointer`: a list's members are items.
pub fn steps_to(index: &YamlIndex, pointer: &str) -> Vec<crate::schema::Step> {
    let mut steps = Vec::new();
    let mut at = String::new();
    for segment in pointer.split('/').skip(1) {
        let in_list = index.get(&at).is_some_and(|n| n.kind == NodeKind::List);
        steps.push(if in_list {
            crate::schema::Step::Item
        } else {
            crate::schema::Step::Key(crate::yaml::unescape(segment))
        });
        at.push('/');
        at.push_str(segment);
    }
    steps
}

/// What a YAML key means, from the schemas' descriptions.
fn key_hover(world: &World, file: SourceFile, offset: usize) -> Option<Hover> {
    let index = file_index(&world.db, file);
    let (node, on_key) = index.yaml.at(offset)?;
    if !on_key {
        return None;
    }
    let (key_span, key) = node.key.clone()?;
    let parent = node.pointer.rsplit_once('/').map_or("", |(p, _)| p);
    let role = ocf_load::build::source::role_of(file.name(&world.db))
        .unwrap_or(ocf_load::build::source::Role::Content);
    let doc = crate::schema::key_doc(
        crate::schema::root(role),
        &steps_to(&index.yaml, parent),
        &key,
    )?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: format!("```yaml\n{key}:\n```\n{doc}"),
        }),
        range: Some(range(world, file, key_span)),
    })
}
