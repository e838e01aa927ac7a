//! The available actions (EC, computeSheet "Actions"): content actions in activation order, then
//! rules actions no content `use`s, in definition order.

use ocf_formula::Value;
use ocf_model::{Action, Scope};
use serde_json::{Value as Json, json};

use crate::context::{Bindings, Mode, SheetContext};
use crate::db::{Activation, CharacterInput, Via};
use crate::report::{action_id, listing_source, resolve_action};

/// One listed action: its ID, the copy or applied entry it runs on, the content it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub id: String,
    pub entry: Option<String>,
    pub source: Option<String>,
}

impl Listed {
    pub fn to_json(&self) -> Json {
        let mut m = serde_json::Map::new();
        m.insert("id".into(), self.id.clone().into());
        if let Some(entry) = &self.entry {
            m.insert("entry".into(), entry.clone().into());
        }
        if let Some(source) = &self.source {
            m.insert("source".into(), source.clone().into());
        }
        Json::Object(m)
    }
}

/// The character's available actions as computeSheet lists them, worked out once per revision of
/// what they read ([`crate::db::listed_actions`], memoized): an action run looks its action up
/// here without walking the activations and the `available` formulas again.
pub fn available_actions(db: &dyn salsa::Database, character: CharacterInput) -> &[Listed] {
    crate::db::listed_actions(db, character)
}

pub(crate) fn listed_actions_query(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> Vec<Listed> {
    let ruleset = character.ruleset(db).ruleset(db);
    let acts = crate::db::activations(db, character);
    let mut out: Vec<Listed> = Vec::new();
    for a in &acts.list {
        // A template's actions are listed with its copy's (the type's, the item's, the templates').
        if a.via == Via::Template {
            continue;
        }
        let Some(entry) = ruleset.item(&a.item) else {
            continue;
        };
        let mut actions: Vec<(&Action, &str, &str)> = Vec::new();
        if let Some(t) = entry.type_name().and_then(|t| ruleset.content_type(t)) {
            actions.extend(
                t.decl
                    .actions
                    .iter()
                    .map(|x| (x, t.pack.as_str(), &*a.item)),
            );
        }
        actions.extend(
            entry
                .item
                .actions
                .iter()
                .map(|x| (x, entry.pack_of("actions"), &*a.item)),
        );
        if a.via == Via::Copy {
            for template in a.templates.iter() {
                if let Some(t) = ruleset.item(template) {
                    actions.extend(
                        t.item
                            .actions
                            .iter()
                            .map(|x| (x, t.pack_of("actions"), template.as_str())),
                    );
                }
            }
        }
        let scope = if a.applied {
            Scope::Applied
        } else {
            Scope::Holder
        };
        let source = listing_source(a);
        for (action, pack, owner) in actions {
            if action.scope.unwrap_or(Scope::Holder) != scope {
                continue;
            }
            let Some(id) = action_id(ruleset, action, pack, owner) else {
                continue;
            };
            if !available(db, character, action, pack, Some(a)) {
                continue;
            }
            let listed = Listed {
                id,
                entry: a.entry.as_deref().map(str::to_owned),
                source: source.clone(),
            };
            if !out.contains(&listed) {
                out.push(listed);
            }
        }
    }
    // Rules actions that no content type or item uses.
    let used = crate::db::used_rules_actions(db, character.ruleset(db));
    for (id, action) in ruleset.actions.iter() {
        if used.contains(id) {
            continue;
        }
        if available(db, character, &action.decl, &action.pack, None) {
            out.push(Listed {
                id: id.to_owned(),
                entry: None,
                source: None,
            });
        }
    }
    out
}

/// The rules actions some content type or item `use`s, by qualified ID: the ruleset's alone, so
/// worked out once per ruleset ([`crate::db::used_rules_actions`]).
pub(crate) fn used_rules_actions_query(
    ruleset: &ocf_model::Ruleset,
) -> std::collections::BTreeSet<String> {
    ruleset
        .content_types
        .iter()
        .flat_map(|(_, t)| t.decl.actions.iter().map(move |x| (x, t.pack.as_str())))
        .chain(ruleset.content.iter().flat_map(|(_, e)| {
            e.item
                .actions
                .iter()
                .map(move |x| (x, e.pack_of("actions")))
        }))
        .filter_map(|(x, pack)| {
            x.r#use
                .as_ref()
                .map(|u| resolve_action(ruleset, pack, u.as_str()))
        })
        .collect()
}

/// An action's `available`, with `item` and `self` as its activation's (none for rules actions).
/// One that fails or isn't `true` is unavailable.
fn available(
    db: &dyn salsa::Database,
    character: CharacterInput,
    action: &Action,
    pack: &str,
    activation: Option<&Activation>,
) -> bool {
    let holds = |formula: &ocf_model::Formula, pack: &str| {
        let bindings = match activation {
            None => Bindings::rules(pack),
            Some(a) => Bindings::with_computed(db, character, pack, a),
        };
        let ctx = SheetContext::new(db, character, Mode::Sheet, bindings);
        let result = ctx.evaluate(formula.as_str());
        result == Ok(Value::Bool(true))
    };
    if let Some(formula) = &action.available
        && !holds(formula, pack)
    {
        return false;
    }
    // A `use` runs the used rules action, so its `available` holds too, with the copy's `self`
    // (EC, "Copies and `self`": "the rules actions they `use`"; decisions.md, "Used actions'
    // `available`").
    if activation.is_some()
        && let Some(used) = &action.r#use
    {
        let ruleset = character.ruleset(db).ruleset(db);
        let id = resolve_action(ruleset, pack, used.as_str());
        if let Some(rules_action) = ruleset.actions.get(&id)
            && let Some(formula) = &rules_action.decl.available
            && !holds(formula, &rules_action.pack)
        {
            return false;
        }
    }
    true
}

/// The JSON list.
pub fn to_json(list: &[Listed]) -> Json {
    json!(list.iter().map(Listed::to_json).collect::<Vec<_>>())
}
