//! Standard copies (EC, "Standard copies"): the copies the rules' and active items' queries hold,
//! added to the character as the engines see it, before it is split into inputs.

use ocf_model::{Character, CopyEntry, Ruleset};
use serde_json::{Value as Json, json};

/// A standard copy's instance ID: the item's qualified ID with the colon and dots as hyphens.
pub fn instance_id(item: &str) -> String {
    item.replace([':', '.'], "-")
}

/// `character` with its standard copies, and the `duplicate-id` errors of entries left out.
///
/// The rules' standard items come first (load order, declaration order, each query's matches
/// sorted, each item once); then, in rounds, the standard items of every item a copy holds, until a
/// round adds none (at most `maxChoiceDepth` rounds). A file entry with a standard copy's ID and
/// item is that copy, saved, in its place; one with its ID and another item is `duplicate-id` and
/// left out. Each unsaved copy is `{ id, item }` after the file's entries of its list: `inventory`
/// for a carried type, else `features`.
pub fn with_standard_copies(ruleset: &Ruleset, character: &Character) -> (Character, Vec<Json>) {
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
    let mut out = character.clone();
    let mut errors = Vec::new();
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
                let entry = CopyEntry {
                    id,
                    item: item.as_str().into(),
                    equipped: None,
                    quantity: None,
                    state: Default::default(),
                    templates: Vec::new(),
                    choices: Default::default(),
                };
                if carried {
                    out.inventory.push(entry);
                } else {
                    out.features.push(entry);
                }
            }
        }
        // The next round: the standard items of every item a copy now holds.
        let held: Vec<String> = out
            .features
            .iter()
            .chain(out.inventory.iter())
            .map(|c| c.item.0.clone())
            .collect();
        let mut added = false;
        for item in held {
            if let Some(entry) = ruleset.item(&item) {
                for query in &entry.item.standard_copies {
                    added |= add(&mut wanted, query);
                }
            }
        }
        if !added {
            break;
        }
    }
    (out, errors)
}
