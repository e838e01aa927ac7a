//! A character file open in the editor (a YAML or JSON file outside every pack that reads as a
//! character): beside each value it saves, the value computeSheet computes for that field, as an
//! inlay hint, with how it was made (base, then each effect and its source) in the hint's tooltip.
//! Its ruleset is made from the packs of the workspace it pins, as `ocf sheet` makes it from the
//! pinned packs' folders: each pin's pack with the packs it depends on, dependencies first.

use std::path::Path;
use std::sync::Arc;

use ocf_load::build::ReadLimits;
use ocf_load::character::{CharacterFile, Format, read_character};
use ocf_model::text::{Texts, keys};
use ocf_model::{PackRelease, Ruleset};
use serde_json::{Map, Value};

use crate::world::World;

/// The most hints one answer holds (a character file saves at most 10 000 values).
const MAX_HINTS: usize = 2_000;

/// The ruleset last made for a character, and the releases it was made from; and the hints last
/// worked out, for the file, its text and the ruleset they came from (an editor asks again as the
/// view scrolls: the sheet isn't computed again for the same text).
#[derive(Default)]
pub struct Rulesets {
    last: Option<(Vec<Arc<PackRelease>>, Arc<Ruleset>)>,
    hints: Option<Kept>,
}

struct Kept {
    path: std::path::PathBuf,
    text: String,
    ruleset: Arc<Ruleset>,
    /// Every hint of the file, whatever range was asked for.
    hints: Vec<lsp_types::InlayHint>,
}

impl Rulesets {
    /// The ruleset of `releases`, made again only when one of them changed.
    fn of(&mut self, releases: Vec<Arc<PackRelease>>) -> Option<Arc<Ruleset>> {
        if let Some((known, ruleset)) = &self.last
            && known.len() == releases.len()
            && known
                .iter()
                .zip(&releases)
                .all(|(a, b)| Arc::ptr_eq(a, b) || a == b)
        {
            return Some(ruleset.clone());
        }
        let given: Vec<PackRelease> = releases.iter().map(|r| (**r).clone()).collect();
        let ruleset =
            Arc::new(ocf_load::load_ruleset(&given, &ocf_load::LoadOptions::default()).ok()?);
        self.last = Some((releases, ruleset.clone()));
        Some(ruleset)
    }
}

/// Reads `text` as a character file; `None` when it is not one (a file outside the packs that
/// doesn't read as a character gets no hints).
pub fn read(path: &Path, text: &str) -> Option<CharacterFile> {
    read_character(
        text.as_bytes().to_vec(),
        &path.display().to_string(),
        Format::of(path),
        &ReadLimits::default(),
    )
    .ok()
}

/// The releases of the packs the character pins, from the workspace (or, as `ocf sheet` finds
/// them, a `testdata/packs/<id>` folder above the file): each pin's pack after the packs it
/// depends on, each once. `None` when a pinned pack isn't found or doesn't build (its own files
/// say why).
fn releases(world: &mut World, path: &Path, file: &CharacterFile) -> Option<Vec<Arc<PackRelease>>> {
    let mut order = Vec::new();
    for pin in &file.character.packs {
        let id = pin.id.as_str();
        let pack = match world.by_id(id) {
            Some(pack) => pack,
            None => {
                let folder = beside(path, id)?;
                let pack = world.load_pack(&folder)?;
                world.resolve_dependencies();
                pack
            }
        };
        for p in world.scope(pack).into_iter().rev() {
            if !order.contains(&p) {
                order.push(p);
            }
        }
    }
    order
        .into_iter()
        .map(|p| crate::db::release(&world.db, p).clone())
        .collect()
}

/// The folder `testdata/packs/<id>` nearest above the character file, as `ocf sheet` looks.
fn beside(path: &Path, id: &str) -> Option<std::path::PathBuf> {
    if id.is_empty() || id.contains(['/', '\\']) || id == "." || id == ".." {
        return None;
    }
    path.parent()?
        .ancestors()
        .map(|dir| dir.join("testdata").join("packs").join(id))
        .find(|candidate| candidate.join("pack.yaml").is_file())
}

/// The inlay hints of the character file `text` at `path` whose values start on lines
/// `first..=last` (0-based): for each saved value, ` → <computed value>` at the end of its line.
pub fn inlay_hints(
    world: &mut World,
    rulesets: &mut Rulesets,
    path: &Path,
    text: &str,
    first: u32,
    last: u32,
) -> Vec<lsp_types::InlayHint> {
    let Some(file) = read(path, text) else {
        return Vec::new();
    };
    let Some(ruleset) = releases(world, path, &file).and_then(|r| rulesets.of(r)) else {
        return Vec::new();
    };
    let known = rulesets
        .hints
        .as_ref()
        .is_some_and(|k| k.path == path && k.text == text && Arc::ptr_eq(&k.ruleset, &ruleset));
    if !known {
        rulesets.hints = Some(Kept {
            path: path.to_path_buf(),
            text: text.to_owned(),
            hints: all_hints(&ruleset, &file, text),
            ruleset,
        });
    }
    let kept = rulesets.hints.as_ref().map_or(&[][..], |k| &k.hints[..]);
    kept.iter()
        .filter(|h| (first..=last).contains(&h.position.line))
        .cloned()
        .collect()
}

/// Every hint of the character file `text`, in the order of its saved values.
fn all_hints(
    ruleset: &Arc<Ruleset>,
    file: &CharacterFile,
    text: &str,
) -> Vec<lsp_types::InlayHint> {
    let sheet =
        ocf_engine::compute_sheet_shared(ruleset.clone(), &file.character, &[], &Map::new());
    let locale = ruleset.default_locale();
    let texts = ruleset.texts.texts(&locale);
    let Some(values) = sheet["values"].as_object() else {
        return Vec::new();
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    for (key, _) in file.character.values.iter() {
        let Some(computed) = field(values, key) else {
            continue;
        };
        let Some(value) = computed.get("value") else {
            continue;
        };
        let pointer = format!("/values/{}", key.replace('~', "~0").replace('/', "~1"));
        let Some(at) = file.locations.value(&pointer) else {
            continue;
        };
        let line = at.line.saturating_sub(1);
        let Ok(line_number) = u32::try_from(line) else {
            continue;
        };
        let end = lines
            .get(line)
            .map(|l| l.trim_end_matches('\r'))
            .map_or(0, |l| l.encode_utf16().count());
        out.push(lsp_types::InlayHint {
            position: lsp_types::Position {
                line: line_number,
                character: end as u32,
            },
            label: lsp_types::InlayHintLabel::String(format!("→ {}", shown(value))),
            kind: None,
            text_edits: None,
            tooltip: Some(lsp_types::InlayHintTooltip::MarkupContent(
                lsp_types::MarkupContent {
                    kind: lsp_types::MarkupKind::Markdown,
                    value: made_of(&texts, computed),
                },
            )),
            padding_left: Some(true),
            padding_right: Some(false),
            data: None,
        });
        if out.len() >= MAX_HINTS {
            break;
        }
    }
    out
}

/// The sheet's entry for the field a saved value names: by its qualified ID, or by a bare ID that
/// one field of the ruleset ends with.
fn field<'a>(values: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if let Some(found) = values.get(key) {
        return Some(found);
    }
    if key.contains(':') {
        return None;
    }
    let suffix = format!(":{key}");
    let mut matching = values.iter().filter(|(id, _)| id.ends_with(&suffix));
    let (_, found) = matching.next()?;
    matching.next().is_none().then_some(found)
}

/// A computed value as an author reads it: strings as written, everything else as JSON.
fn shown(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(79).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// How the value was made: its base, then each step of its breakdown with its source, named by
/// the packs' texts where they name it.
fn made_of(texts: &Texts<'_>, computed: &Value) -> String {
    let mut out = String::new();
    if let Some(base) = computed.get("base") {
        out.push_str(&format!("base `{}`", shown(base)));
    }
    for step in computed["breakdown"].as_array().into_iter().flatten() {
        let op = step["op"].as_str().unwrap_or("?");
        let value = shown(&step["value"]);
        let source = &step["source"];
        let named = |id: &str| {
            let key = keys::content(id, "name");
            if texts.has(&key) {
                format!("{} (`{id}`)", texts.text(&key, &[]))
            } else {
                format!("`{id}`")
            }
        };
        let from = match (source["id"].as_str(), source["entry"].as_str()) {
            (Some(id), Some(entry)) => format!("{}, copy `{entry}`", named(id)),
            (Some(id), None) => named(id),
            _ => source.to_string(),
        };
        if !out.is_empty() {
            out.push_str("  \n");
        }
        out.push_str(&format!("{op} `{value}` from {from}"));
    }
    if let Some(error) = computed.get("error").and_then(Value::as_str) {
        if !out.is_empty() {
            out.push_str("  \n");
        }
        out.push_str(&format!("error `{error}`"));
    }
    out
}
