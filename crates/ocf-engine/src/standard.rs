//! Standard copies (EC, "Standard copies"): the copies the rules' and active items' queries hold,
//! added to the character as the engines see it, after it is checked and before it is split into
//! inputs ([`crate::load`] runs the steps in order).

use std::sync::Arc;

use crate::db::CopyInput;
use ocf_model::{Character, CopyEntry, Ruleset};
use serde_json::{Value as Json, json};

/// A standard copy's instance ID: the item's qualified ID with the colon and dots as hyphens.
pub fn instance_id(item: &str) -> String {
    item.replace([':', '.'], "-")
}

/// The character as the engines see it, with what [`crate::load::view`] added.
#[derive(Debug, Clone, PartialEq)]
pub struct StandardView {
    pub character: Character,
    /// What the ruleset can't take in the file (decisions.md, "Character files") and
    /// `duplicate-id` errors of entries left out.
    pub errors: Vec<Json>,
    /// The templates content keeps on copies, `(copy instance ID, template)`: those the rounds
    /// added, not those the file saves (EC, "The activation list": `keptBy`).
    pub kept: Vec<(String, String)>,
}

/// `checked` (the file as [`crate::file_check::checked`] left it, with its `errors`) with its
/// standard copies, the `duplicate-id` errors of entries left out, and the templates kept rather
/// than saved.
///
/// The rules' standard items come first (load order, declaration order, each query's matches
/// sorted, each item once); then, in rounds, the standard items of every item a copy holds, until a
/// round adds none (at most `maxChoiceDepth` rounds). A file entry with a standard copy's ID and
/// item is that copy, saved, in its place; one with its ID and another item is `duplicate-id` and
/// left out. Each unsaved copy is `{ id, item }` after the file's entries of its list: `inventory`
/// for a carried type, else `features`.
pub fn standard_copies(
    ruleset: &Arc<Ruleset>,
    checked: Character,
    mut errors: Vec<Json>,
) -> StandardView {
    let mut kept_list: Vec<(String, String)> = Vec::new();
    let mut wanted: Vec<String> = Vec::new();
    let add = |wanted: &mut Vec<String>, query: &ocf_model::Query| {
        let items = ruleset
            .query_result(
                query.r#type.as_str(),
                query.r#where.as_ref().map(|w| w.as_str()),
            )
            .unwrap_or_default();
        let mut added = false;
        for item in items {
            if !wanted.contains(item) {
                wanted.push(item.clone());
                added = true;
            }
        }
        added
    };
    for query in &ruleset.standard_copies {
        add(&mut wanted, &query.decl);
    }
    let mut out = checked;
    let mut scratch = None;
    let mut placed: Vec<String> = Vec::new();
    for _round in 0..crate::activation::MAX_CHOICE_DEPTH {
        // Place what is wanted and not placed yet.
        for item in wanted.clone() {
            if placed.contains(&item) {
                continue;
            }
            placed.push(item.clone());
            let id = instance_id(&item);
            let mut saved = false;
            for (name, list) in [
                ("features", &mut out.features),
                ("inventory", &mut out.inventory),
            ] {
                let mut i = 0;
                while i < list.len() {
                    if list[i].id == id {
                        if list[i].item.as_str() == item {
                            saved = true;
                        } else {
                            errors.push(json!({
                                "code": "duplicate-id",
                                "path": format!("/{name}/{i}/id"),
                                "data": { "id": id, "item": list[i].item.as_str() },
                            }));
                            list.remove(i);
                            continue;
                        }
                    }
                    i += 1;
                }
            }
            if !saved {
                let carried = ruleset
                    .item(&item)
                    .and_then(|e| e.type_name())
                    .and_then(|t| ruleset.content_type(t))
                    .is_some_and(|t| t.decl.carried == Some(true));
                let entry = CopyEntry::new(id, item.as_str());
                if carried {
                    out.inventory.push(entry);
                } else {
                    out.features.push(entry);
                }
            }
        }
        // The next round: the standard items of every active item, and the kept templates.
        let (items, kept) = active_round(ruleset, &out, &mut scratch);
        let mut added = false;
        for item in items {
            if let Some(entry) = ruleset.item(&item) {
                for query in &entry.item.standard_copies {
                    added |= add(&mut wanted, query);
                }
            }
        }
        for (template, matches) in kept {
            for copy in out.features.iter_mut().chain(out.inventory.iter_mut()) {
                if matches.contains(&copy.id)
                    && !copy.templates.iter().any(|t| t.as_str() == template)
                {
                    copy.templates.push(template.as_str().into());
                    kept_list.push((copy.id.clone(), template.clone()));
                    added = true;
                }
            }
        }
        if !added {
            break;
        }
    }
    StandardView {
        character: out,
        errors,
        kept: kept_list,
    }
}

/// Whether `ruleset` has activation rounds: some item declares `standardCopies` or
/// `keepsTemplates`. Without them the standard copies are the rules' alone, and what is active
/// can't change them.
pub fn needs_rounds(ruleset: &Ruleset) -> bool {
    ruleset
        .content
        .iter()
        .any(|(_, e)| !e.item.standard_copies.is_empty() || !e.item.keeps_templates.is_empty())
}

/// The database the rounds activate on, and the character in it, kept from one round to the next so
/// that a round recomputes only what the copies and templates the last round added reach.
type Scratch = Option<(crate::db::Database, crate::db::CharacterInput)>;

/// One activation round over `character` as it stands (EC, "Standard copies"): the items active,
/// in activation order, and each kept template whose `when` holds with the items its copy query
/// matches. A ruleset with no item-level `standardCopies` or `keepsTemplates` needs no round.
fn active_round(
    ruleset: &Arc<Ruleset>,
    character: &Character,
    scratch: &mut Scratch,
) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    if !needs_rounds(ruleset) {
        return (Vec::new(), Vec::new());
    }
    let (db, input) = match scratch {
        Some((db, input)) => {
            // Between rounds only the copies change: the ones added, the templates kept, and a
            // file entry left out as a `duplicate-id`.
            sync_copies(db, *input, character);
            (&*db, *input)
        }
        None => {
            let db = crate::db::Database::default();
            let rules = crate::db::RulesetInput::load(&db, ruleset.clone());
            let input = crate::db::CharacterInput::load_as_is(
                &db,
                rules,
                character,
                &[],
                Vec::new(),
                Vec::new(),
            );
            let (db, input) = scratch.insert((db, input));
            (&*db, *input)
        }
    };
    let activations = crate::db::activations(db, input);
    let mut items = Vec::new();
    let mut kept = Vec::new();
    for activation in &activations.list {
        if !items.iter().any(|i: &String| **i == *activation.item) {
            items.push(activation.item.to_string());
        }
        let Some(entry) = ruleset.item(&activation.item) else {
            continue;
        };
        for keep in &entry.item.keeps_templates {
            if !crate::activation::holds(db, input, activation, keep.when.as_ref()) {
                continue;
            }
            let pack = entry.pack_of("keepsTemplates");
            let matches = input
                .features(db)
                .iter()
                .chain(input.inventory(db).iter())
                .filter(|copy| {
                    crate::activation::copy_matches(db, input, **copy, &keep.copies, pack)
                })
                .map(|copy| copy.id(db).clone())
                .collect();
            kept.push((keep.template.as_str().to_owned(), matches));
        }
    }
    (items, kept)
}

/// Brings the scratch character's copy lists to `character`'s, each copy reused by its ID and item
/// and its templates set when they differ.
fn sync_copies(
    db: &mut crate::db::Database,
    input: crate::db::CharacterInput,
    character: &Character,
) {
    use crate::input::CopyList;
    use salsa::Setter;
    for (list, entries) in [
        (CopyList::Features, &character.features),
        (CopyList::Inventory, &character.inventory),
    ] {
        let old = match list {
            CopyList::Features => input.features(db).clone(),
            CopyList::Inventory => input.inventory(db).clone(),
        };
        // Each old copy is reused once, by the first entry with its ID and item.
        let mut reusable: rustc_hash::FxHashMap<(&str, &str), Vec<CopyInput>> = Default::default();
        for copy in old.iter().rev() {
            reusable
                .entry((copy.id(db).as_str(), copy.item(db).as_str()))
                .or_default()
                .push(*copy);
        }
        let copies: Vec<CopyInput> = entries
            .iter()
            .map(|entry| {
                reusable
                    .get_mut(&(entry.id.as_str(), entry.item.0.as_str()))
                    .and_then(Vec::pop)
                    .unwrap_or_else(|| CopyInput::from_entry(db, input.ruleset(db), list, entry))
            })
            .collect();
        drop(reusable);
        for (copy, entry) in copies.iter().zip(entries) {
            let templates: Vec<String> = entry.templates.iter().map(|t| t.0.clone()).collect();
            if **copy.templates(db) != templates {
                copy.set_templates(db).to(Arc::new(templates));
            }
        }
        if *old != copies {
            match list {
                CopyList::Features => input.set_features(db).to(Arc::new(copies)),
                CopyList::Inventory => input.set_inventory(db).to(Arc::new(copies)),
            };
        }
    }
}
