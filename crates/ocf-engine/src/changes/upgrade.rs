//! upgrade (reconstructed from what the chapters imply; decisions.md, issue 12): the character
//! re-pinned to the ruleset's pack versions, its homebrew layered first, with what no longer
//! resolves reported: saved values of fields the ruleset lacks, copies and applied entries of
//! content it lacks, stored offers of follow-ups it lacks. Nothing is dropped: the report says
//! what the player must fix.

use ocf_model::{Character, PackPin, Ruleset};
use serde_json::{Value as Json, json};

/// The upgraded file and what no longer resolves, or the homebrew's errors.
pub fn upgrade(
    ruleset: &Ruleset,
    character: &Character,
) -> Result<(Character, Vec<Json>), Vec<Json>> {
    let mut file = character.clone();
    file.packs = ruleset
        .packs
        .iter()
        .filter(|p| p.id != "homebrew")
        .map(|p| PackPin {
            id: p.id.as_str().into(),
            version: p.version.clone(),
        })
        .collect();
    let layered = match &file.homebrew {
        Some(_) => ocf_load::load_homebrew(ruleset, &file).map_err(|errors| {
            errors
                .iter()
                .map(|e| serde_json::to_value(e).unwrap_or_default())
                .collect::<Vec<_>>()
        })?,
        None => ruleset.clone(),
    };
    let mut report = Vec::new();
    for (key, _) in file.values.iter() {
        let q = crate::input::qualify_saved(&layered, &file, key);
        if layered.field(&q).is_none() {
            report.push(json!({ "code": "unknown-field", "path": format!("/values/{key}"), "data": { "field": key } }));
        }
    }
    for (list, copies) in [("features", &file.features), ("inventory", &file.inventory)] {
        for (i, copy) in copies.iter().enumerate() {
            if layered.item(copy.item.as_str()).is_none() {
                report.push(json!({ "code": "unknown-reference", "path": format!("/{list}/{i}/item"), "data": { "id": copy.item } }));
            }
        }
    }
    for (i, entry) in file.applied.iter().enumerate() {
        if layered.item(entry.source.as_str()).is_none() {
            report.push(json!({ "code": "unknown-reference", "path": format!("/applied/{i}/source"), "data": { "id": entry.source } }));
        }
    }
    for (i, offer) in file.follow_ups.iter().enumerate() {
        if layered.follow_ups.get(offer.follow_up.as_str()).is_none() {
            report.push(json!({ "code": "unknown-follow-up", "path": format!("/followUps/{i}/followUp"), "data": { "followUp": offer.follow_up } }));
        }
    }
    Ok((file, report))
}
