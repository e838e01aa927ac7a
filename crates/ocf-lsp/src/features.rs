//! What pack authors expect of a language server beyond diagnostics, hover, definition and
//! completion: rename (across files and dependent packs), quick fixes, document highlight,
//! workspace symbols, signature help in formula calls, folding and selection ranges, semantic
//! tokens for formulas and inlay hints of the fields' types.

use std::collections::HashMap;

use lsp_types::{
    DocumentHighlight, DocumentHighlightKind, FoldingRange, Location, ParameterInformation,
    ParameterLabel, Range, SelectionRange, SignatureHelp, SignatureInformation, SymbolInformation,
    SymbolKind, TextEdit, Url, WorkspaceEdit,
};
use ocf_formula::Function;
use ocf_formula::lowered::Expr;

use crate::db::{Pack, SourceFile, file_index};
use crate::ide::range;
use crate::names::{self, Found, Target};
use crate::symbols::Kind;
use crate::world::World;
use crate::yaml::{NodeKind, Span};

/// The most answers of a list request (symbols, folding ranges, tokens, hints).
const MAX_ANSWERS: usize = 5000;

fn is_id_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// Where `id` is written inside the text at `span`, as a whole name (possibly after `pack:`).
fn locate(text: &str, span: Span, id: &str) -> Option<Span> {
    let sub = text.get(span.start..span.end.min(text.len()))?;
    let mut from = sub.len();
    while let Some(at) = sub[..from].rfind(id) {
        let before = sub[..at].chars().next_back();
        let after = sub[at + id.len()..].chars().next();
        if before.is_none_or(|c| !is_id_char(c) || c == ':') && after.is_none_or(|c| !is_id_char(c))
        {
            return Some(Span {
                start: span.start + at,
                end: span.start + at + id.len(),
            });
        }
        from = at;
    }
    None
}

/// The name under the cursor that can be renamed: its span (the local part) and local ID.
pub fn prepare_rename(world: &World, pack: Pack, file: SourceFile, offset: usize) -> Option<Span> {
    let Target::Name { kind, id, span } = names::target_at(world, file, offset)? else {
        return None;
    };
    if names::declarations(world, pack, kind, &id).is_empty() {
        return None;
    }
    let (_, local) = names::split(&id);
    locate(file.text(&world.db), span, local)
}

/// A place a name is written: its file, its span, and whether it declares the name.
type Place = (SourceFile, Span, bool);

/// Every place the name under the cursor is declared or used (in the file's pack, the packs it
/// depends on and the packs depending on its declaration's), each with whether it declares.
fn occurrences(
    world: &World,
    pack: Pack,
    file: SourceFile,
    offset: usize,
) -> Option<(String, Vec<Place>)> {
    let Target::Name { kind, id, .. } = names::target_at(world, file, offset)? else {
        return None;
    };
    let found: Vec<Found> = names::declarations(world, pack, kind, &id);
    let local = found.first()?.decl.id.clone();
    let mut out = Vec::new();
    for decl in &found {
        out.push((decl.file, decl.decl.span, true));
        for (f, span) in names::references(world, decl) {
            out.push((f, span, false));
        }
    }
    // Each place once, at the local part of the name.
    let mut placed: Vec<Place> = Vec::new();
    for (f, span, declares) in out {
        if let Some(at) = locate(f.text(&world.db), span, &local)
            && !placed.iter().any(|(g, s, _)| *g == f && *s == at)
        {
            placed.push((f, at, declares));
        }
    }
    Some((local, placed))
}

/// The edits renaming the name under the cursor everywhere it is declared and used; an error
/// for a new name that is no ID.
pub fn rename(
    world: &World,
    pack: Pack,
    file: SourceFile,
    offset: usize,
    new_name: &str,
) -> Result<Option<WorkspaceEdit>, String> {
    if new_name.is_empty()
        || new_name.contains(':')
        || new_name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control())
        || new_name.contains(['#', '"', '\'', '[', ']', '{', '}', ',', '&', '*', '!', '|'])
    {
        return Err(format!(
            "`{new_name}` is not an ID: no spaces, colons, quotes or YAML indicators"
        ));
    }
    let Some((_, places)) = occurrences(world, pack, file, offset) else {
        return Ok(None);
    };
    let mut changes: HashMap<Url, Vec<TextEdit>> = HashMap::new();
    for (f, span, _) in places {
        let Some(path) = world.path_of(f) else {
            continue;
        };
        let Ok(uri) = Url::from_file_path(path) else {
            continue;
        };
        changes
            .entry(uri)
            .or_default()
            .push(TextEdit::new(range(world, f, span), new_name.to_owned()));
    }
    for edits in changes.values_mut() {
        edits.sort_by_key(|e| (e.range.start.line, e.range.start.character));
    }
    Ok(Some(WorkspaceEdit {
        changes: Some(changes),
        ..WorkspaceEdit::default()
    }))
}

/// The name under the cursor where the file declares or uses it.
pub fn highlights(
    world: &World,
    pack: Pack,
    file: SourceFile,
    offset: usize,
) -> Vec<DocumentHighlight> {
    let Some((_, places)) = occurrences(world, pack, file, offset) else {
        return Vec::new();
    };
    places
        .into_iter()
        .filter(|(f, _, _)| *f == file)
        .map(|(_, span, declares)| DocumentHighlight {
            range: range(world, file, span),
            kind: Some(if declares {
                DocumentHighlightKind::WRITE
            } else {
                DocumentHighlightKind::READ
            }),
        })
        .collect()
}

pub fn symbol_kind(kind: Kind) -> SymbolKind {
    match kind {
        Kind::Field => SymbolKind::FIELD,
        Kind::Content => SymbolKind::OBJECT,
        Kind::ContentType => SymbolKind::CLASS,
        Kind::Tag => SymbolKind::CONSTANT,
        Kind::Action | Kind::FollowUp => SymbolKind::FUNCTION,
        Kind::Situational => SymbolKind::BOOLEAN,
        _ => SymbolKind::STRUCT,
    }
}

/// The declarations of every known pack whose ID holds the query (ignoring case), the packs in
/// path order.
#[allow(deprecated)]
pub fn workspace_symbols(world: &World, query: &str) -> Vec<SymbolInformation> {
    let query = query.to_lowercase();
    let mut out = Vec::new();
    for pack in world.packs() {
        let pack_id = world.pack_id(pack);
        for &file in pack.files(&world.db) {
            for decl in &file_index(&world.db, file).symbols.decls {
                if !decl.id.to_lowercase().contains(&query) {
                    continue;
                }
                let Some(location) = crate::ide::location(world, file, decl.span) else {
                    continue;
                };
                out.push(SymbolInformation {
                    name: decl.id.clone(),
                    kind: symbol_kind(decl.kind),
                    tags: None,
                    deprecated: None,
                    location,
                    container_name: pack_id.clone(),
                });
                if out.len() >= MAX_ANSWERS {
                    return out;
                }
            }
        }
    }
    out
}

/// The maps, lists and block scalars written over more than one line.
pub fn folding_ranges(world: &World, file: SourceFile) -> Vec<FoldingRange> {
    let index = file_index(&world.db, file);
    let text = file.text(&world.db);
    let mut out = Vec::new();
    for node in &index.yaml.nodes {
        let start = node.key.as_ref().map_or(node.span.start, |(k, _)| k.start);
        let first = index.lines.position(text, start).line;
        let end = index.lines.position(text, node.span.end);
        // A block node ends at the start of the line after it.
        let last = if end.character == 0 {
            end.line.saturating_sub(1)
        } else {
            end.line
        };
        if last > first && (node.kind != NodeKind::Alias) {
            out.push(FoldingRange {
                start_line: first,
                end_line: last,
                ..FoldingRange::default()
            });
            if out.len() >= MAX_ANSWERS {
                break;
            }
        }
    }
    out
}

/// From the name under the cursor out to the document: the name inside a formula, the scalar,
/// the key with its value, and each enclosing node with its key.
pub fn selection_range(world: &World, file: SourceFile, offset: usize) -> SelectionRange {
    let index = file_index(&world.db, file);
    let text = file.text(&world.db);
    let mut spans: Vec<Span> = Vec::new();
    for r in &index.symbols.refs {
        if r.span.contains(offset) {
            spans.push(r.span);
        }
    }
    for site in &index.symbols.formulas {
        if let Some(whole) = site.text_span()
            && whole.contains(offset)
        {
            spans.push(whole);
        }
    }
    for node in &index.yaml.nodes {
        let key_start = node.key.as_ref().map(|(k, _)| k.start);
        let whole = Span {
            start: key_start.unwrap_or(node.span.start),
            end: node.span.end,
        };
        if node.span.contains(offset) {
            spans.push(node.span);
        }
        if let Some((k, _)) = &node.key
            && k.contains(offset)
        {
            spans.push(*k);
        }
        if whole.contains(offset) {
            spans.push(whole);
        }
    }
    spans.push(Span {
        start: 0,
        end: text.len(),
    });
    spans.sort_by_key(|s| (s.end - s.start, std::cmp::Reverse(s.start)));
    spans.dedup();
    // Each range holds the one before it.
    let mut chain: Vec<Span> = Vec::new();
    for span in spans {
        if chain.last().is_none_or(|inner| {
            span.start <= inner.start && inner.end <= span.end && span != *inner
        }) {
            chain.push(span);
        }
    }
    let mut out: Option<SelectionRange> = None;
    for span in chain.into_iter().rev() {
        out = Some(SelectionRange {
            range: range(world, file, span),
            parent: out.map(Box::new),
        });
    }
    out.unwrap_or(SelectionRange {
        range: Range::default(),
        parent: None,
    })
}

/// The formula text before the cursor, when the cursor is in a formula (or after it on its line).
pub fn formula_before(world: &World, file: SourceFile, offset: usize) -> Option<String> {
    let index = file_index(&world.db, file);
    let text = file.text(&world.db);
    for site in &index.symbols.formulas {
        let Some(whole) = site.text_span() else {
            continue;
        };
        if let Some(at) = site.value_offset(offset) {
            return Some(site.text[..at].to_owned());
        }
        if offset > whole.end
            && offset <= text.len()
            && text[whole.end..offset]
                .chars()
                .all(|c| c == ' ' || c == '\t')
        {
            return Some(format!("{}{}", site.text, &text[whole.end..offset]));
        }
    }
    None
}

/// The innermost function call open before the cursor: its function and how many arguments are
/// before the cursor's.
fn open_call(before: &str) -> Option<(Function, u32)> {
    let mut depth = 0usize;
    let mut commas = 0u32;
    let mut quote: Option<char> = None;
    // Quotes are read forwards first: a comma or parenthesis inside a string does not count.
    let mut in_string = vec![false; before.len() + 1];
    for (i, c) in before.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => in_string[i] = true,
            None if c == '\'' || c == '"' => quote = Some(c),
            None => {}
        }
    }
    for (i, c) in before.char_indices().rev() {
        if in_string[i] {
            continue;
        }
        match c {
            ')' | ']' | '}' => depth += 1,
            '[' | '{' if depth > 0 => depth -= 1,
            '[' | '{' => commas = 0,
            '(' if depth > 0 => depth -= 1,
            '(' => {
                let name: String = before[..i]
                    .trim_end()
                    .chars()
                    .rev()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                match Function::from_name(&name) {
                    Some(function) => return Some((function, commas)),
                    // A parenthesized expression: its call is further out.
                    None => commas = 0,
                }
            }
            ',' if depth == 0 => commas += 1,
            _ => {}
        }
    }
    None
}

/// The parameters of a signature `name(a, b[, c]) -> t`, split at its top-level commas.
fn parameters(signature: &str) -> Vec<String> {
    let Some(open) = signature.find('(') else {
        return Vec::new();
    };
    let Some(close) = signature.rfind(')') else {
        return Vec::new();
    };
    let inner = &signature[open + 1..close.max(open + 1)];
    let mut out = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in inner.chars() {
        match c {
            '[' => {
                depth += 1;
                if depth == 1 && !current.trim().is_empty() {
                    out.push(current.trim().to_owned());
                    current.clear();
                }
                continue;
            }
            ']' => {
                depth -= 1;
                continue;
            }
            ',' => {
                if !current.trim().is_empty() {
                    out.push(current.trim().to_owned());
                }
                current.clear();
                continue;
            }
            _ => current.push(c),
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

/// The signature of the function call the cursor is in, with the argument it is typing.
pub fn signature_help(world: &World, file: SourceFile, offset: usize) -> Option<SignatureHelp> {
    let before = formula_before(world, file, offset)?;
    let (function, commas) = open_call(&before)?;
    let (signature, meaning) = crate::docs::function(function);
    let params = parameters(signature);
    let active = (commas as usize).min(params.len().saturating_sub(1)) as u32;
    Some(SignatureHelp {
        signatures: vec![SignatureInformation {
            label: signature.to_owned(),
            documentation: Some(lsp_types::Documentation::String(meaning.to_owned())),
            parameters: Some(
                params
                    .into_iter()
                    .map(|p| ParameterInformation {
                        label: ParameterLabel::Simple(p),
                        documentation: None,
                    })
                    .collect(),
            ),
            active_parameter: Some(active),
        }],
        active_signature: Some(0),
        active_parameter: Some(active),
    })
}

/// The token types of [`semantic_tokens`], in the legend's order.
pub const TOKEN_TYPES: &[&str] = &["function", "variable", "property", "number", "string"];

/// The formulas' tokens: functions, context roots, field reads, numbers and strings, as the
/// protocol's relative encoding (tokens on one line only).
pub fn semantic_tokens(world: &World, file: SourceFile) -> Vec<u32> {
    let index = file_index(&world.db, file);
    let text = file.text(&world.db);
    let mut tokens: Vec<(Span, u32)> = Vec::new();
    for site in &index.symbols.formulas {
        if site.map.is_none() {
            continue;
        }
        let Ok(formula) = ocf_formula::Formula::parse(&site.text) else {
            continue;
        };
        let lowered = formula.lowered();
        for (id, expr) in lowered.exprs.iter() {
            let r = lowered.range(id);
            let (a, b) = (u32::from(r.start()) as usize, u32::from(r.end()) as usize);
            let (a, b, ty) = match expr {
                Expr::Call { function, .. } => (a, a + function.as_str().len(), 0),
                Expr::Root(_) => (a, b, 1),
                Expr::Field(_) => (a, b, 2),
                Expr::Literal(_) => match site.text.get(a..).and_then(|t| t.chars().next()) {
                    Some('\'' | '"') => (a, b, 4),
                    Some(c) if c.is_ascii_digit() => (a, b, 3),
                    _ => continue,
                },
                _ => continue,
            };
            if b > a && b <= site.text.len() {
                tokens.push((site.span_of(a, b), ty));
            }
        }
        if tokens.len() >= MAX_ANSWERS {
            break;
        }
    }
    tokens.sort_by_key(|(s, _)| (s.start, s.end));
    let mut out = Vec::new();
    let (mut line, mut col) = (0u32, 0u32);
    let mut last_end = 0;
    for (span, ty) in tokens {
        if span.start < last_end {
            continue;
        }
        let start = index.lines.position(text, span.start);
        let end = index.lines.position(text, span.end);
        if end.line != start.line || end.character <= start.character {
            continue;
        }
        let delta_line = start.line - line;
        let delta_col = if delta_line == 0 {
            start.character - col
        } else {
            start.character
        };
        out.extend([
            delta_line,
            delta_col,
            end.character - start.character,
            ty,
            0,
        ]);
        line = start.line;
        col = start.character;
        last_end = span.end;
    }
    out
}

/// The declared type of each field a formula reads, after the read, in `within`.
pub fn inlay_hints(
    world: &World,
    pack: Pack,
    file: SourceFile,
    within: Span,
) -> Vec<lsp_types::InlayHint> {
    let index = file_index(&world.db, file);
    let text = file.text(&world.db);
    let mut out = Vec::new();
    for r in &index.symbols.refs {
        if r.kind != Kind::Field || r.span.end < within.start || r.span.start > within.end {
            continue;
        }
        // Only reads inside formulas: a reference key names its field already.
        if !index.symbols.formulas.iter().any(|f| {
            f.text_span()
                .is_some_and(|w| w.start <= r.span.start && r.span.end <= w.end)
        }) {
            continue;
        }
        let Some(found) = names::declarations(world, pack, Kind::Field, &r.id)
            .into_iter()
            .next()
        else {
            continue;
        };
        let ty = file_index(&world.db, found.file)
            .yaml
            .get(&format!("{}/type", found.decl.pointer))
            .and_then(|n| n.scalar.clone());
        let Some(ty) = ty else {
            continue;
        };
        out.push(lsp_types::InlayHint {
            position: index.lines.position(text, r.span.end),
            label: lsp_types::InlayHintLabel::String(format!(": {ty}")),
            kind: Some(lsp_types::InlayHintKind::TYPE),
            text_edits: None,
            tooltip: None,
            padding_left: Some(false),
            padding_right: Some(true),
            data: None,
        });
        if out.len() >= MAX_ANSWERS {
            break;
        }
    }
    out
}

/// The edit distance between two names (insertions, deletions, substitutions), bounded.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 3 || a.len() > 128 || b.len() > 128 {
        return usize::MAX;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut row = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            row.push((prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1));
        }
        prev = row;
    }
    prev[b.len()]
}

/// The declared name of `kind` nearest to `id`, when one is near enough to be a typo.
pub fn nearest(world: &World, pack: Pack, kind: Kind, id: &str) -> Option<String> {
    let (_, local) = names::split(id);
    let limit = (local.chars().count() / 3).clamp(1, 3);
    names::visible(world, pack, kind)
        .into_iter()
        .map(|f| f.decl.id)
        .filter(|d| d != local)
        .map(|d| (distance(local, &d), d))
        .filter(|(n, _)| *n <= limit)
        .min()
        .map(|(_, d)| d)
}

/// One quick fix: its title, the edits by file, and the diagnostic it mends.
pub struct Fix {
    pub title: String,
    pub edits: Vec<(SourceFile, Span, String)>,
    pub diagnostic: usize,
}

/// The quick fixes of the file's diagnostics overlapping `within`: each "did you mean" (an
/// unknown key's suggestion, a name near an unknown one), and the declaration of a missing tag
/// or field.
pub fn fixes(world: &World, pack: Pack, file: SourceFile, within: Span) -> Vec<Fix> {
    let diagnostics = crate::db::file_diagnostics(&world.db, pack, file);
    let text = file.text(&world.db);
    let mut out = Vec::new();
    for (i, d) in diagnostics.iter().enumerate() {
        if d.end < within.start || d.start > within.end {
            continue;
        }
        let span = Span {
            start: d.start,
            end: d.end,
        };
        if let Some(suggestion) = &d.suggestion {
            let at = locate(
                text,
                span,
                text.get(d.start..d.end).unwrap_or_default().trim(),
            )
            .unwrap_or(span);
            out.push(Fix {
                title: format!("Replace with `{suggestion}`"),
                edits: vec![(file, at, suggestion.clone())],
                diagnostic: i,
            });
            continue;
        }
        if !matches!(
            d.code.as_str(),
            "unknown-reference" | "unknown-tag" | "formula-error"
        ) {
            continue;
        }
        let Some(Target::Name { kind, id, span }) = names::target_at(world, file, d.start) else {
            continue;
        };
        if !names::declarations(world, pack, kind, &id).is_empty() {
            continue;
        }
        let (_, local) = names::split(&id);
        if let Some(near) = nearest(world, pack, kind, &id)
            && let Some(at) = locate(text, span, local)
        {
            out.push(Fix {
                title: format!("Did you mean `{near}`? Replace `{local}`"),
                edits: vec![(file, at, near)],
                diagnostic: i,
            });
        }
        if let Some(edit) = declaration(world, pack, kind, local) {
            out.push(Fix {
                title: format!("Declare the {} `{local}`", kind.noun()),
                edits: vec![edit],
                diagnostic: i,
            });
        }
    }
    out
}

/// The edit declaring a missing tag or field after the pack's last declaration of its kind, in
/// the same style (a block list item, a flow list element, a field map entry).
fn declaration(
    world: &World,
    pack: Pack,
    kind: Kind,
    id: &str,
) -> Option<(SourceFile, Span, String)> {
    if !matches!(kind, Kind::Tag | Kind::Field) {
        return None;
    }
    let last = pack
        .files(&world.db)
        .iter()
        .filter_map(|&f| {
            let d = file_index(&world.db, f)
                .symbols
                .decls
                .iter()
                .rfind(|d| d.kind == kind)?
                .clone();
            Some((f, d))
        })
        .last()?;
    let (file, decl) = last;
    let index = file_index(&world.db, file);
    let text = file.text(&world.db);
    let line_start = text[..decl.span.start].rfind('\n').map_or(0, |i| i + 1);
    let column = decl.span.start - line_start;
    match kind {
        Kind::Tag => {
            let before = text[line_start..decl.span.start].trim_end();
            let at = index.yaml.get(&decl.pointer)?.span.end;
            if before.ends_with('-') {
                let dash = line_start + before.len() - 1;
                let indent = " ".repeat(dash - line_start);
                let end = index
                    .lines
                    .line_end(text, index.lines.position(text, at).line as usize);
                Some((file, Span { start: end, end }, format!("\n{indent}- {id}")))
            } else {
                Some((file, Span { start: at, end: at }, format!(", {id}")))
            }
        }
        _ => {
            let node = index.yaml.get(&decl.pointer)?;
            let end_line = index.lines.position(text, node.span.end);
            let line = if end_line.character == 0 {
                end_line.line.saturating_sub(1)
            } else {
                end_line.line
            };
            let end = index.lines.line_end(text, line as usize);
            let indent = " ".repeat(column);
            Some((
                file,
                Span { start: end, end },
                format!("\n{indent}{id}:\n{indent}  type: integer"),
            ))
        }
    }
}

/// A location's range in a file, for the tests' rendering.
pub fn location_of(world: &World, file: SourceFile, span: Span) -> Option<Location> {
    crate::ide::location(world, file, span)
}
