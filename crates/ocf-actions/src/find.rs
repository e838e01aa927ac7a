//! Finding the action (EA "Starting an action" 1): the listing computeSheet's `actions` gives for
//! this character, with its `entry` and `source`, and what the action runs with (`item`, `self`).

use ocf_engine::actions::{Listed, available_actions};
use ocf_engine::activation::{Activation, Via, activations};
use ocf_engine::context::{Bindings, SelfRef};
use ocf_engine::input::CharacterInput;
use ocf_engine::view::ItemKey;
use ocf_model::{Action, Keyed, Namespace, ParamEntry, Ruleset};

use crate::error::ActionError;

/// An action found for a run.
pub struct Found<'db> {
    /// The ID it is listed under.
    pub id: String,
    /// The action whose steps run: a `use`'s used rules action, else the action itself.
    pub def: &'db Action,
    /// The pack `def`'s formulas resolve names in.
    pub pack: &'db str,
    /// A `use`'s fixed parameters, with the pack they resolve in.
    pub fixed: Option<(&'db Keyed<ParamEntry>, &'db str)>,
    pub self_ref: SelfRef,
    pub item: Option<ItemKey<'db>>,
    pub entry: Option<String>,
    pub source: Option<String>,
    /// For an action of picked content, the pick that activated it as a `pick: self` change
    /// names it: `{ path: { entry?, choice }, option }` (DA, "The action's own pick").
    pub pick: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The pick that activated `a`, when it is a pick: its choice path (the choice's key last, the
/// owner copy as `entry`) and its option as a string literal, as applyChanges reads them.
fn own_pick(a: &Activation) -> Option<serde_json::Map<String, serde_json::Value>> {
    if a.via != Via::Pick {
        return None;
    }
    let (option, choice) = a.path.as_ref()?.split_last()?;
    let mut path = serde_json::Map::new();
    if let Some(entry) = &a.entry {
        path.insert("entry".into(), serde_json::json!(entry));
    }
    path.insert("choice".into(), serde_json::json!(choice));
    let mut pick = serde_json::Map::new();
    pick.insert("path".into(), serde_json::Value::Object(path));
    pick.insert(
        "option".into(),
        serde_json::json!(format!(
            "'{}'",
            option.replace('\\', "\\\\").replace('\'', "\\'")
        )),
    );
    Some(pick)
}

/// The `source` computeSheet lists an activation's actions with (as ocf-engine's listing does):
/// content that isn't the copy's own item (picked, granted) names itself; an applied entry's own
/// content doesn't; content with no copy always does.
fn listing_source(a: &Activation) -> Option<String> {
    let own = matches!(a.via, Via::Copy) || (a.applied && a.parent.is_none());
    match (&a.entry, own) {
        (Some(_), true) => None,
        _ => Some(a.item.to_string()),
    }
}

fn resolve_action(ruleset: &Ruleset, pack: &str, id: &str) -> String {
    ruleset
        .resolve(pack, id, Namespace::Action)
        .unwrap_or_else(|| id.to_owned())
}

/// Finds `id` with `entry` and `source` among the character's listed actions; `check_listed`
/// false skips the listing check (a nested action run without `source` or `entry`).
pub fn find<'db>(
    db: &'db dyn salsa::Database,
    character: CharacterInput,
    id: &str,
    entry: Option<&str>,
    source: Option<&str>,
    check_listed: bool,
) -> Result<Found<'db>, ActionError> {
    let ruleset: &'db Ruleset = character.ruleset(db).ruleset(db);
    let unknown = || {
        let mut e = ActionError::new(
            "unknown-action",
            format!("`{id}` is not among the character's actions"),
        )
        .with("action", id);
        if let Some(entry) = entry {
            e = e.with("entry", entry);
        }
        if let Some(source) = source {
            e = e.with("source", source);
        }
        e
    };
    if check_listed {
        let listed = available_actions(db, character);
        let wanted = Listed {
            id: id.to_owned(),
            entry: entry.map(str::to_owned),
            source: source.map(str::to_owned),
        };
        if !listed.contains(&wanted) {
            return Err(unknown());
        }
    }
    if entry.is_none() && source.is_none() {
        let Some(action) = ruleset.actions.get(id) else {
            return Err(unknown());
        };
        return Ok(Found {
            id: id.to_owned(),
            def: &action.decl,
            pack: &action.pack,
            fixed: None,
            self_ref: SelfRef::None,
            item: None,
            entry: None,
            source: None,
            pick: None,
        });
    }
    let acts = activations(db, character);
    for a in &acts.list {
        if a.via == Via::Template
            || a.entry.as_deref() != entry
            || listing_source(a).as_deref() != source
        {
            continue;
        }
        let Some(content) = ruleset.item(&a.item) else {
            continue;
        };
        let mut candidates: Vec<(&'db Action, &'db str, &str)> = Vec::new();
        if let Some(t) = content.type_name().and_then(|t| ruleset.content_type(t)) {
            candidates.extend(
                t.decl
                    .actions
                    .iter()
                    .map(|x| (x, t.pack.as_str(), &*a.item)),
            );
        }
        candidates.extend(
            content
                .item
                .actions
                .iter()
                .map(|x| (x, content.pack_of("actions"), &*a.item)),
        );
        if a.via == Via::Copy {
            for template in a.templates.iter() {
                if let Some(t) = ruleset.item(template) {
                    candidates.extend(
                        t.item
                            .actions
                            .iter()
                            .map(|x| (x, t.pack_of("actions"), template.as_str())),
                    );
                }
            }
        }
        for (action, pack, owner) in candidates {
            let listed_id = match (&action.r#use, &action.id) {
                (Some(used), _) => resolve_action(ruleset, pack, used.as_str()),
                (None, Some(local)) => format!("{owner}#{local}"),
                (None, None) => continue,
            };
            if listed_id != id {
                continue;
            }
            let bindings = Bindings::with_computed(db, character, pack, a);
            let (def, def_pack, fixed) = match &action.r#use {
                Some(_) => {
                    let Some(used) = ruleset.actions.get(id) else {
                        return Err(unknown());
                    };
                    (&used.decl, used.pack.as_str(), Some((&action.params, pack)))
                }
                None => (action, pack, None),
            };
            return Ok(Found {
                id: id.to_owned(),
                def,
                pack: def_pack,
                fixed,
                self_ref: bindings.self_ref,
                item: bindings.item,
                entry: entry.map(str::to_owned),
                source: source.map(str::to_owned),
                pick: own_pick(a),
            });
        }
    }
    Err(unknown())
}
