//! Translation files (`i18n/<locale>.yaml`, `i18n/<locale>/*.yaml`; docs/spec/i18n.md): completion
//! of the text keys the pack and its dependencies give (`ocf_load::build::texts::catalogue`), hover
//! on a key (what it names, its arguments, the default locale's text), definition from a key to
//! the declaration it names, a declared thing's name on hover anywhere, and the quick fix of a
//! `missing-text` warning (the key written into the pack's default-locale file).

use std::sync::Arc;

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, Hover, HoverContents,
    Location, MarkupContent, MarkupKind, TextEdit,
};
use ocf_load::build::source::{Role, role_of};
use ocf_load::build::texts::{Declared, KeySpec, catalogue, locale_of};
use ocf_model::text::{DEFAULT_LOCALE, TextTable, humanize, keys, qualify_key};
use ocf_model::{Keyed, PackRelease};

use crate::db::{Pack, SourceFile, file_index};
use crate::features::Fix;
use crate::names::{self, Found};
use crate::symbols::Kind;
use crate::world::World;
use crate::yaml::Span;

/// Whether the file is one of its pack's translation files.
pub fn is_translation(world: &World, file: SourceFile) -> bool {
    role_of(file.name(&world.db)) == Some(Role::Texts)
}

/// The pack's release as the build last made it, or its draft when the build has errors.
fn release_of(world: &World, pack: Pack) -> Option<Arc<PackRelease>> {
    let built = crate::db::build(&world.db, pack);
    built.release.clone().or_else(|| built.draft.clone())
}

fn default_locale(release: &PackRelease) -> &str {
    release.default_locale.as_deref().unwrap_or(DEFAULT_LOCALE)
}

/// The texts a pack sees: its dependencies' then its own (a later pack's replaces an earlier's).
fn table(world: &World, pack: Pack) -> TextTable {
    let mut table = TextTable::default();
    for p in world.scope(pack).into_iter().rev() {
        if let Some(release) = release_of(world, p) {
            table.add_pack(
                release.id.as_str(),
                release.default_locale.as_deref(),
                &release.texts,
            );
        }
    }
    table
}

/// One key a translation file of `pack` may give: as written there (a dependency's qualified).
struct Entry {
    key: String,
    spec: KeySpec,
    /// The release that declares what the key names.
    release: Arc<PackRelease>,
}

/// Every key a translation file of `pack` may give: the pack's own unqualified, its dependencies'
/// qualified by their pack.
fn entries(world: &World, pack: Pack) -> Vec<Entry> {
    let mut out = Vec::new();
    for (n, p) in world.scope(pack).into_iter().enumerate() {
        let Some(release) = release_of(world, p) else {
            continue;
        };
        let keyed: Keyed<KeySpec> = catalogue(&release);
        for (key, spec) in keyed.iter() {
            let key = if n == 0 {
                key.to_owned()
            } else {
                format!("{}:{key}", release.id)
            };
            out.push(Entry {
                key,
                spec: spec.clone(),
                release: release.clone(),
            });
        }
    }
    out
}

/// What a key names, in words: "field `str.score`", "weapon `sword`".
fn names_what(entry: &Entry) -> String {
    match &entry.spec.at {
        Some(Declared::Content(index, _)) => {
            let item = entry.release.content.get(*index);
            let ty = item
                .and_then(|i| i.r#type.as_ref())
                .map_or("content item".to_owned(), |t| format!("{t}"));
            match item.and_then(|i| i.id.as_ref()) {
                Some(id) => format!("{ty} `{id}`"),
                None => ty,
            }
        }
        Some(Declared::Rules(pointer)) => {
            let mut segments = pointer.trim_start_matches('/').split('/');
            let root = segments.next().unwrap_or_default();
            let noun = match root {
                "fields" => "field",
                "contentTypes" => "content type",
                "tags" => "tag",
                "situational" => "situational choice",
                "bands" => "band set",
                "actions" => "rules action",
                "choices" => "rules choice",
                "links" => "link slot",
                "followUps" => "follow-up",
                "creation" => "creation start",
                "displayGroups" => "display group",
                "settings" => "setting",
                other => other,
            };
            match segments.next() {
                Some(id) if id.parse::<usize>().is_err() => {
                    format!("{noun} `{}`", crate::yaml::unescape(id))
                }
                _ => noun.to_owned(),
            }
        }
        None => "the pack".to_owned(),
    }
}

/// The text a key is: its last segment (`name`, `prompt`, …).
fn leaf(key: &str) -> &str {
    key.rsplit('.').next().unwrap_or(key)
}

/// The key under the cursor, when it is a top-level key of a translation file.
fn key_at(world: &World, file: SourceFile, offset: usize) -> Option<(Span, String)> {
    let index = file_index(&world.db, file);
    let (node, on_key) = index.yaml.at(offset)?;
    if !on_key || node.pointer[1..].contains('/') {
        return None;
    }
    node.key.clone()
}

fn entry_for<'a>(world: &World, pack: Pack, entries: &'a [Entry], key: &str) -> Option<&'a Entry> {
    let own = world.pack_id(pack);
    let local = match key.split_once(':') {
        Some((p, rest)) if Some(p) == own.as_deref() => rest,
        _ => key,
    };
    entries.iter().find(|e| e.key == local)
}

/// Keys completed where a translation file's top-level key is written: the keys not yet given in
/// the file's locale first (sorted before the others), then the rest.
pub fn complete(world: &World, pack: Pack, file: SourceFile, offset: usize) -> Vec<CompletionItem> {
    let text = file.text(&world.db);
    let index = file_index(&world.db, file);
    let offset = crate::text::floor_boundary(text, offset.min(text.len()));
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let typed = &text[line_start..offset];
    // Only a key at the start of a line: not indented, not ended by `: ` yet (a qualified key's
    // own `:` is part of it), not a comment.
    if typed.starts_with([' ', '\t', '#', '-']) || typed.contains(": ") || typed.contains(":\t") {
        return Vec::new();
    }
    let Some(locale) = locale_of(file.name(&world.db)) else {
        return Vec::new();
    };
    // Given in the locale: by its files as last built, and by this file as it is now.
    let mut given: std::collections::HashSet<String> = release_of(world, pack)
        .and_then(|r| r.texts.get(locale).cloned())
        .map(|m| m.iter().map(|(k, _)| k.to_owned()).collect())
        .unwrap_or_default();
    given.extend(
        index
            .yaml
            .nodes
            .iter()
            .filter(|n| n.pointer.len() > 1 && !n.pointer[1..].contains('/'))
            .filter_map(|n| n.key.as_ref().map(|(_, k)| k.clone())),
    );
    let range = crate::ide::range(
        world,
        file,
        Span {
            start: line_start,
            end: offset,
        },
    );
    let defaults = table(world, pack);
    entries(world, pack)
        .into_iter()
        .filter(|e| e.key.starts_with(typed.trim()))
        .map(|e| {
            let written = given.contains(&e.key);
            let qualified = qualify_key(e.release.id.as_str(), e.key.rsplit(':').next().unwrap());
            let mut doc = String::new();
            if !e.spec.args.is_empty() {
                doc.push_str(&format!("arguments: {}\n", e.spec.args.join(", ")));
            }
            let default = default_locale(&e.release);
            if let Some(found) = defaults.texts(default).message(&qualified) {
                doc.push_str(&format!("{}: {}\n", found.locale, found.message));
            }
            CompletionItem {
                label: e.key.clone(),
                kind: Some(CompletionItemKind::PROPERTY),
                detail: Some(format!(
                    "{} of {}{}",
                    leaf(&e.key),
                    names_what(&e),
                    if written { " (already given)" } else { "" }
                )),
                documentation: (!doc.is_empty()).then_some(Documentation::String(doc)),
                sort_text: Some(format!("{}{}", u8::from(written), e.key)),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(
                    range,
                    format!("{}: ", e.key),
                ))),
                ..CompletionItem::default()
            }
        })
        .collect()
}

/// Hover on a translation file's key: what it names, its arguments, the default locale's text.
pub fn hover(world: &World, pack: Pack, file: SourceFile, offset: usize) -> Option<Hover> {
    let (span, key) = key_at(world, file, offset)?;
    let all = entries(world, pack);
    let mut value = format!("```\n{key}\n```\n");
    match entry_for(world, pack, &all, &key) {
        None => value.push_str("names nothing the pack or its dependencies declare"),
        Some(e) => {
            value.push_str(&format!(
                "the {} of {}{}",
                leaf(&e.key),
                names_what(e),
                if e.spec.required {
                    format!(" (required in `{}`)", default_locale(&e.release))
                } else {
                    String::new()
                }
            ));
            if e.spec.args.is_empty() {
                value.push_str("\n\narguments: none");
            } else {
                let args: Vec<String> = e.spec.args.iter().map(|a| format!("`{a}`")).collect();
                value.push_str(&format!("\n\narguments: {}", args.join(", ")));
            }
            let qualified = qualify_key(e.release.id.as_str(), e.key.rsplit(':').next()?);
            let default = default_locale(&e.release);
            if let Some(found) = table(world, pack).texts(default).message(&qualified) {
                value.push_str(&format!("\n\n{}: {}", found.locale, found.message));
            }
        }
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: Some(crate::ide::range(world, file, span)),
    })
}

/// The declarations a key names: its root gives the kind (`fields.` a field, `types.` a content
/// type, …; anything else a content item), the longest run of segments after it that is declared
/// the ID.
fn declared_by(world: &World, pack: Pack, key: &str) -> Vec<Found> {
    let (qualifier, rest) = match key.split_once(':') {
        Some((p, r)) if !p.contains('.') => (Some(p), r),
        _ => (None, key),
    };
    let segments: Vec<&str> = rest.split('.').collect();
    let kind = match segments[0] {
        "fields" => Some(Kind::Field),
        "types" => Some(Kind::ContentType),
        "tags" => Some(Kind::Tag),
        "actions" => Some(Kind::Action),
        "situational" => Some(Kind::Situational),
        "bands" => Some(Kind::BandSet),
        "links" => Some(Kind::LinkSlot),
        "followUps" => Some(Kind::FollowUp),
        "creation" => Some(Kind::Creation),
        _ => None,
    };
    let mut tries: Vec<(Kind, &[&str])> = Vec::new();
    if let Some(kind) = kind {
        tries.push((kind, &segments[1..]));
    }
    tries.push((Kind::Content, &segments[..]));
    for (kind, parts) in tries {
        for n in (1..parts.len()).rev() {
            let id = parts[..n].join(".");
            let id = qualifier.map_or(id.clone(), |q| format!("{q}:{id}"));
            let found = names::declarations(world, pack, kind, &id);
            if !found.is_empty() {
                return found;
            }
        }
    }
    Vec::new()
}

/// Definition from a translation file's key to the declaration it names.
pub fn definition(world: &World, pack: Pack, file: SourceFile, offset: usize) -> Vec<Location> {
    let Some((_, key)) = key_at(world, file, offset) else {
        return Vec::new();
    };
    declared_by(world, pack, &key)
        .iter()
        .filter_map(|f| crate::ide::location(world, f.file, f.decl.span))
        .collect()
}

/// A declared thing's name from the texts `pack` sees, in its default locale (falling back as
/// the engine does), when some locale gives it: for the hover on its ID.
pub fn name_of(world: &World, pack: Pack, kind: Kind, id: &str, found: &Found) -> Option<String> {
    let (_, local) = names::split(id);
    let key = match kind {
        Kind::Field => keys::field(local, "name"),
        Kind::Content => keys::content(local, "name"),
        Kind::ContentType => keys::content_type(local, "name"),
        Kind::Tag => keys::tag(local),
        Kind::Action => format!("{}.name", keys::action_root(local)),
        Kind::Situational => keys::rules("situational", local, "name"),
        Kind::BandSet => keys::band(local, None, "name"),
        Kind::LinkSlot => keys::rules("links", local, "name"),
        Kind::FollowUp => keys::rules("followUps", local, "name"),
        Kind::Creation => keys::rules("creation", local, "name"),
    };
    let declaring = world.pack_id(found.pack)?;
    let qualified = qualify_key(&declaring, &key);
    let locale = release_of(world, pack)
        .map_or(DEFAULT_LOCALE.to_owned(), |r| default_locale(&r).to_owned());
    let table = table(world, pack);
    let texts = table.texts(&locale);
    let found = texts.message(&qualified)?;
    let text = texts.format(&qualified, &[("count", 1i64.into())])?;
    Some(format!("{text} ({})", found.locale))
}

/// The quick fix of each `missing-text` warning overlapping `within`: the key written, with a
/// readable text to start from, at the end of the pack's default-locale file.
pub fn fixes(world: &World, pack: Pack, file: SourceFile, within: Span) -> Vec<Fix> {
    let diagnostics = crate::db::file_diagnostics(&world.db, pack, file);
    let mut out = Vec::new();
    for (i, d) in diagnostics.iter().enumerate() {
        if d.code != "missing-text" || d.end < within.start || d.start > within.end {
            continue;
        }
        // "`<key>` has no text in the pack's default locale `<locale>`".
        let mut quoted = d.message.split('`').skip(1).step_by(2);
        let (Some(key), _, Some(locale)) = (quoted.next(), (), quoted.next()) else {
            continue;
        };
        let Some(target) = default_file(world, pack, locale) else {
            continue;
        };
        let text = target.text(&world.db);
        let mut insert = String::new();
        if !text.is_empty() && !text.ends_with('\n') {
            insert.push('\n');
        }
        let name = humanize(key);
        insert.push_str(&format!("{key}: {}\n", yaml_scalar(&name)));
        out.push(Fix {
            title: format!("Add `{key}` to {}", target.name(&world.db)),
            edits: vec![(
                target,
                Span {
                    start: text.len(),
                    end: text.len(),
                },
                insert,
            )],
            diagnostic: i,
        });
    }
    out
}

/// The pack's file for new texts in `locale`: `i18n/<locale>.yaml`, else the first file under
/// `i18n/<locale>/`.
fn default_file(world: &World, pack: Pack, locale: &str) -> Option<SourceFile> {
    let files = pack.files(&world.db);
    let single = format!("i18n/{locale}.yaml");
    let folder = format!("i18n/{locale}/");
    files
        .iter()
        .find(|f| *f.name(&world.db) == single)
        .or_else(|| {
            files
                .iter()
                .filter(|f| f.name(&world.db).starts_with(&folder))
                .min_by_key(|f| f.name(&world.db).clone())
        })
        .copied()
}

/// A text as a YAML scalar: plain when it reads back the same, else double-quoted.
fn yaml_scalar(text: &str) -> String {
    let plain = !text.is_empty()
        && !text.contains([
            ':', '#', '{', '}', '[', ']', ',', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`',
        ])
        && !text.starts_with(['-', '?', ' '])
        && !text.ends_with(' ');
    if plain {
        text.to_owned()
    } else {
        serde_json::to_string(text).unwrap_or_default()
    }
}
