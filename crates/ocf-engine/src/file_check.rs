//! What a character file says that its ruleset can't take (decisions.md, "Character files"): each
//! is an error of every call that takes the character, with a `path` into the file, and the
//! entry, key or value is left out so the rest computes, as EC does for an entry with a standard
//! copy's ID and another item ("is `duplicate-id` ... and is left out") and for a saved link to an
//! undeclared slot ("the rest computes").
//!
//! - a pin to a pack the ruleset doesn't hold, or holds at another version: `missing-dependency`;
//! - an entry ID used before in `features`, `inventory` or `applied`: `duplicate-id`, the later
//!   entry left out;
//! - a copy's `item`, a template or an applied entry's `source` that names no content:
//!   `unknown-reference` (`kind: content`), the entry (or template) left out;
//! - a state key the entry's content type, item and templates don't declare: `unknown-key`, and a
//!   saved state value that isn't of its key's type: `wrong-type`, each left out (the key reads its
//!   default); a saved number outside its key's bounds: `out-of-range`, clamped;
//! - a saved value for a field the ruleset doesn't declare: `unknown-reference` (`kind: field`),
//!   for a field that isn't an input: `not-input-field`, of the wrong type: `wrong-type` (the
//!   default is used), each left out.
//!
//! A `specVersion` newer than the engine's refuses the file instead ([`spec_version_error`]).

use std::sync::Arc;

use ocf_model::{AppliedEntry, Character, CopyEntry, FieldType, Keyed, Literal, Ruleset};
use rustc_hash::FxHashSet;
use serde_json::{Value as Json, json};

use crate::view::state_decls;

/// `spec-version-unsupported` for a file written for a spec newer than the engine's (EC: a pack's
/// `specVersion` "must not be newer than the engine's"; the character's is its homebrew's, and the
/// file's keys are that version's).
pub fn spec_version_error(character: &Character) -> Option<Json> {
    let supported = ocf_load::ruleset::SPEC_VERSION;
    let written = character.spec_version.as_str();
    let engine = ocf_load::version::parse_version(supported)?;
    match ocf_load::version::parse_version(written) {
        Some(version) if version <= engine => None,
        _ => Some(json!({
            "code": "spec-version-unsupported",
            "message": format!(
                "the file is written for spec {written}; this engine implements {supported}"
            ),
            "path": "/specVersion",
            "data": { "specVersion": written, "supported": supported },
        })),
    }
}

/// `character` as the engines see it: what the ruleset can't take left out, with an error each;
/// saved state is checked once standard copies are found ([`checked_state`]).
pub fn checked(ruleset: &Ruleset, character: &Character) -> (Character, Vec<Json>) {
    let mut errors = Vec::new();
    pins(ruleset, character, &mut errors);
    let mut ids: FxHashSet<&str> = FxHashSet::default();
    let features = copies(
        ruleset,
        "features",
        &character.features,
        &mut ids,
        &mut errors,
    );
    let inventory = copies(
        ruleset,
        "inventory",
        &character.inventory,
        &mut ids,
        &mut errors,
    );
    let applied = applied(ruleset, &character.applied, &mut ids, &mut errors);
    let values = values(ruleset, character, &mut errors);
    // Made a part at a time: a clone of the whole file would copy the lists and values only to
    // drop them (a session opens every character, an action's proposed sheet its own).
    let Character {
        id,
        spec_version,
        packs,
        creating,
        values: _,
        features: _,
        inventory: _,
        applied: _,
        choices,
        competing,
        links,
        follow_ups,
        homebrew,
        extensions,
    } = character;
    let out = Character {
        id: id.clone(),
        spec_version: spec_version.clone(),
        packs: packs.clone(),
        creating: *creating,
        values,
        features,
        inventory,
        applied,
        choices: choices.clone(),
        competing: competing.clone(),
        links: links.clone(),
        follow_ups: follow_ups.clone(),
        homebrew: homebrew.clone(),
        extensions: extensions.clone(),
    };
    (out, errors)
}

fn pins(ruleset: &Ruleset, character: &Character, errors: &mut Vec<Json>) {
    for (i, pin) in character.packs.iter().enumerate() {
        let (pack, version) = (pin.id.as_str(), pin.version.as_str());
        let loaded = ruleset.packs.iter().find(|p| p.id == pack);
        let message = match loaded {
            None => format!("the file pins `{pack}` {version}, which the ruleset doesn't hold"),
            Some(p) if p.version.as_str() != version => format!(
                "the file pins `{pack}` {version}, and the ruleset holds {}",
                p.version
            ),
            Some(_) => continue,
        };
        let mut data = json!({ "pack": pack, "version": version });
        if let Some(p) = loaded {
            data["loaded"] = p.version.as_str().into();
        }
        errors.push(json!({
            "code": "missing-dependency",
            "message": message,
            "path": format!("/packs/{i}"),
            "data": data,
        }));
    }
}

/// An entry ID seen before: `duplicate-id` at `path` (made only then).
fn duplicate<'a>(
    ids: &mut FxHashSet<&'a str>,
    id: &'a str,
    path: impl FnOnce() -> String,
    errors: &mut Vec<Json>,
) -> bool {
    if ids.insert(id) {
        return false;
    }
    errors.push(json!({
        "code": "duplicate-id",
        "message": format!("another entry has the ID `{id}`; this one is left out"),
        "path": path(),
        "data": { "id": id },
    }));
    true
}

fn unknown_content(id: &str, path: String, what: &str) -> Json {
    json!({
        "code": "unknown-reference",
        "message": format!("no pack declares the content `{id}`; {what} is left out"),
        "path": path,
        "data": { "kind": "content", "id": id },
    })
}

fn copies<'a>(
    ruleset: &Ruleset,
    list: &str,
    entries: &'a [CopyEntry],
    ids: &mut FxHashSet<&'a str>,
    errors: &mut Vec<Json>,
) -> Vec<CopyEntry> {
    let mut kept = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        // Paths are made for the errors only: most files have none.
        let at = || format!("/{list}/{i}");
        if duplicate(ids, &entry.id, || format!("{}/id", at()), errors) {
            continue;
        }
        if ruleset.item(entry.item.as_str()).is_none() {
            errors.push(unknown_content(
                entry.item.as_str(),
                format!("{}/item", at()),
                "the copy",
            ));
            continue;
        }
        let mut entry = entry.clone();
        let mut index = 0;
        entry.templates.retain(|t| {
            let known = ruleset.item(t.as_str()).is_some();
            if !known {
                errors.push(unknown_content(
                    t.as_str(),
                    format!("{}/templates/{index}", at()),
                    "the template",
                ));
            }
            index += 1;
            known
        });
        kept.push(entry);
    }
    kept
}

fn applied<'a>(
    ruleset: &Ruleset,
    entries: &'a [AppliedEntry],
    ids: &mut FxHashSet<&'a str>,
    errors: &mut Vec<Json>,
) -> Vec<AppliedEntry> {
    let mut kept = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let at = || format!("/applied/{i}");
        if duplicate(ids, &entry.id, || format!("{}/id", at()), errors) {
            continue;
        }
        if ruleset.item(entry.source.as_str()).is_none() {
            errors.push(unknown_content(
                entry.source.as_str(),
                format!("{}/source", at()),
                "the entry",
            ));
            continue;
        }
        kept.push(entry.clone());
    }
    kept
}

/// Checks the saved state of `seen`'s entries (the file as the engines see it, its standard copies
/// and kept templates found: a kept template may declare a state key the file saves), leaving
/// out what their declarations don't take. Paths point into `file`, where each entry (its ID
/// unique by now) was written; an unsaved standard copy saves no state.
pub fn checked_state(
    ruleset: &Arc<Ruleset>,
    file: &Character,
    seen: &mut Character,
    errors: &mut Vec<Json>,
) {
    let mut items = Items::new(ruleset);
    let written = |list: &str, entries: &[CopyEntry], id: &str| {
        entries
            .iter()
            .position(|e| e.id == id)
            .map(|i| format!("/{list}/{i}"))
    };
    for copy in seen.features.iter_mut().chain(seen.inventory.iter_mut()) {
        if copy.state.is_empty() {
            continue;
        }
        let Some(at) = written("features", &file.features, &copy.id)
            .or_else(|| written("inventory", &file.inventory, &copy.id))
        else {
            continue;
        };
        let templates: Vec<String> = copy.templates.iter().map(|t| t.0.clone()).collect();
        copy.state = state(
            ruleset,
            (copy.item.as_str(), &templates),
            &copy.id,
            &copy.state,
            &at,
            &mut items,
            errors,
        );
    }
    for entry in &mut seen.applied {
        let Some(i) = file.applied.iter().position(|e| e.id == entry.id) else {
            continue;
        };
        entry.state = state(
            ruleset,
            (entry.source.as_str(), &[]),
            &entry.id,
            &entry.state,
            &format!("/applied/{i}"),
            &mut items,
            errors,
        );
    }
}

/// The saved state an entry's declarations take: undeclared keys (`unknown-key`, with the nearest
/// declared one) and values of the wrong type (`wrong-type`) left out.
fn state(
    ruleset: &Ruleset,
    (content, templates): (&str, &[String]),
    entry: &str,
    saved: &Keyed<Literal>,
    at: &str,
    items: &mut Items<'_>,
    errors: &mut Vec<Json>,
) -> Keyed<Literal> {
    let decls = state_decls(ruleset, content, templates);
    let mut kept = Keyed::default();
    for (key, value) in saved.iter() {
        let path = format!("{at}/state/{}", escape(key));
        let Some((_, decl)) = decls.iter().find(|(k, _)| *k == key) else {
            let suggestion = ocf_model::nearest_key(key, decls.iter().map(|(k, _)| *k));
            let mut message = format!("`{content}` declares no state key `{key}`");
            if let Some(s) = suggestion {
                message.push_str(&format!(", did you mean `{s}`?"));
            }
            let mut data = json!({ "entry": entry, "key": key });
            if let Some(s) = suggestion {
                data["suggestion"] = s.into();
            }
            errors.push(
                json!({ "code": "unknown-key", "message": message, "path": path, "data": data }),
            );
            continue;
        };
        if !fits(value, decl.r#type, &decl.values) {
            let expected = type_name(decl.r#type);
            errors.push(json!({
                "code": "wrong-type",
                "message": format!(
                    "the state `{key}` is {value}, not {}; its default is used",
                    with_article(expected)
                ),
                "path": path,
                "data": { "entry": entry, "key": key, "expected": expected },
            }));
            continue;
        }
        let value = match out_of_bounds(decl, value, || items.item(content, templates)) {
            Some(bound) => {
                errors.push(json!({
                    "code": "out-of-range",
                    "message": format!(
                        "the state `{key}` is {value}, outside its bounds; it is read as {bound}"
                    ),
                    "path": path,
                    "data": { "entry": entry, "key": key, "value": value, "bound": bound },
                }));
                bound
            }
            None => value.clone(),
        };
        kept.0.insert(key.to_owned(), value);
    }
    kept
}

/// The items state bounds read, made on a scratch database only when a bound reads `item` (most
/// bounds are numbers).
struct Items<'a> {
    ruleset: &'a Arc<Ruleset>,
    db: Option<(crate::db::Database, crate::db::RulesetInput)>,
}

impl<'a> Items<'a> {
    fn new(ruleset: &'a Arc<Ruleset>) -> Items<'a> {
        Items { ruleset, db: None }
    }

    /// `item` for `content` with `templates`, as the copy's formulas see it.
    fn item(&mut self, content: &str, templates: &[String]) -> Option<ocf_formula::Value> {
        let (db, rules) = self.db.get_or_insert_with(|| {
            let db = crate::db::Database::default();
            let rules = crate::db::RulesetInput::load(&db, self.ruleset.clone());
            (db, rules)
        });
        let key = crate::db::ItemKey::new(&*db, *rules, content.to_owned(), templates.to_vec());
        crate::db::item_view(&*db, key).clone()
    }
}

/// The bound a saved number crosses, as a saved input value's: `min`, then `max` (EC, "Round and
/// clamp": "A saved value outside them is reported in `errors` (`out-of-range`) and clamped").
/// Bounds see `item`, the entry's item with its templates (EC: "state bounds and defaults" are
/// among the places "a copy's `item` is read"), made only for a bound that reads it.
fn out_of_bounds(
    decl: &ocf_model::StateDecl,
    value: &Literal,
    item: impl FnOnce() -> Option<ocf_formula::Value>,
) -> Option<Literal> {
    use ocf_formula::{Formula, MapContext, Root, Value};
    let number = Value::from_json(value).ok()?;
    if !matches!(decl.r#type, FieldType::Decimal | FieldType::Integer) {
        return None;
    }
    let mut item = Some(item);
    let mut context: Option<MapContext> = None;
    let mut bound = |formula: &Option<ocf_model::Formula>| {
        let formula = Formula::parse(formula.as_ref()?.as_str()).ok()?;
        let value = match formula.evaluate(&MapContext::new()) {
            Ok(value) => value,
            Err(_) => {
                if context.is_none() {
                    let mut ctx = MapContext::new();
                    if let Some(view) = item.take().and_then(|f| f()) {
                        ctx = ctx.with_root(Root::Item, view);
                    }
                    context = Some(ctx);
                }
                formula.evaluate(context.as_ref()?).ok()?
            }
        };
        Some((value.as_decimal()?, value))
    };
    let at = number.as_decimal()?;
    if let Some((min, value)) = bound(&decl.min)
        && at < min
    {
        return Some(value.to_json());
    }
    if let Some((max, value)) = bound(&decl.max)
        && at > max
    {
        return Some(value.to_json());
    }
    None
}

/// Whether the engines take `value` as the saved value of `field` (qualified): an input field's, of
/// its type. What they don't take is left out of the file as they see it ([`values`]).
pub fn takes_saved(ruleset: &Ruleset, field: &str, value: &Literal) -> bool {
    ruleset.field(field).is_some_and(|decl| {
        decl.decl.input == Some(true) && fits(value, decl.decl.r#type, &decl.decl.values)
    })
}

/// The saved values of declared input fields, of their types; the others reported and left out.
fn values(ruleset: &Ruleset, character: &Character, errors: &mut Vec<Json>) -> Keyed<Literal> {
    let mut kept = Keyed::default();
    for (id, value) in character.values.iter() {
        let field = crate::input::qualify_saved(ruleset, character, id);
        // A declared field's path names it by its qualified ID, as `out-of-range`'s does, however
        // the file writes it (a session saves an edited value under that ID). Made for an
        // error only.
        let path = || format!("/values/{}", escape(&field));
        match ruleset.field(&field) {
            None => errors.push(json!({
                "code": "unknown-reference",
                "message": format!("no pack declares the field `{id}`; its saved value is ignored"),
                "path": path(),
                "data": { "kind": "field", "id": id },
            })),
            Some(decl) if decl.decl.input != Some(true) => errors.push(json!({
                "code": "not-input-field",
                "message": format!(
                    "`{field}` is not an input field; its saved value is ignored"
                ),
                "path": path(),
                "data": { "field": field },
            })),
            Some(decl) if !fits(value, decl.decl.r#type, &decl.decl.values) => {
                let expected = type_name(decl.decl.r#type);
                errors.push(json!({
                    "code": "wrong-type",
                    "message": format!(
                        "the saved value {value} of `{field}` is not {}; its default is used",
                        with_article(expected)
                    ),
                    "path": path(),
                    "data": { "field": field, "expected": expected },
                }));
            }
            Some(_) => {
                kept.0.insert(id.to_owned(), value.clone());
            }
        }
    }
    kept
}

/// Whether a saved literal is a value of `ty` (an enum's one of its `values`, when it lists them).
pub fn fits(value: &Literal, ty: FieldType, values: &[Literal]) -> bool {
    match ty {
        FieldType::Integer => value.is_i64() || value.is_u64(),
        FieldType::Decimal => value.is_number(),
        FieldType::Boolean => value.is_boolean(),
        FieldType::String | FieldType::Id => value.is_string(),
        FieldType::Enum => value.is_string() && (values.is_empty() || values.contains(value)),
        FieldType::Set => value
            .as_array()
            .is_some_and(|items| items.iter().all(Json::is_string)),
        FieldType::Dice => match value {
            Json::String(text) => ocf_formula::dice_from_notation(text).is_ok(),
            other => other.is_i64(),
        },
    }
}

/// A type as a declaration writes it.
pub fn type_name(ty: FieldType) -> &'static str {
    match ty {
        FieldType::Integer => "integer",
        FieldType::Decimal => "decimal",
        FieldType::Boolean => "boolean",
        FieldType::String => "string",
        FieldType::Enum => "enum",
        FieldType::Id => "id",
        FieldType::Set => "set",
        FieldType::Dice => "dice",
    }
}

/// `an integer`, `a string`.
fn with_article(name: &str) -> String {
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

/// A key as a JSON pointer segment (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
