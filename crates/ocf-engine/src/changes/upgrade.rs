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
    // A pin re-pinned to an older version is said, not done silently (decisions.md, issue 36).
    for (i, pin) in file.packs.iter().enumerate() {
        let Some(old) = character.packs.iter().find(|p| p.id == pin.id) else {
            continue;
        };
        let parse = |v: &str| ocf_load::version::parse_version(v);
        if let (Some(from), Some(to)) = (parse(old.version.as_str()), parse(pin.version.as_str()))
            && to < from
        {
            report.push(json!({
                "code": "pack-downgraded",
                "path": format!("/packs/{i}/version"),
                "data": { "pack": pin.id, "from": old.version, "to": pin.version },
            }));
        }
    }
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
    for (list, copies) in [("features", &file.features), ("inventory", &file.inventory)] {
        for (i, copy) in copies.iter().enumerate() {
            for (j, template) in copy.templates.iter().enumerate() {
                if layered.item(template.as_str()).is_none() {
                    report.push(json!({ "code": "unknown-reference", "path": format!("/{list}/{i}/templates/{j}"), "data": { "id": template } }));
                }
            }
        }
    }
    for (i, offer) in file.follow_ups.iter().enumerate() {
        // A content follow-up (`<content>#<id>`, `<pack>:<type>#<id>`) resolves as computeSheet's
        // stored offers do.
        let source = offer.source.as_ref().map(|s| s.as_str());
        if !crate::offers::follow_up_exists(&layered, offer.follow_up.as_str(), source) {
            report.push(json!({ "code": "unknown-follow-up", "path": format!("/followUps/{i}/followUp"), "data": { "followUp": offer.follow_up } }));
        }
    }
    Ok((file, report))
}

/// upgrade as JSON: `{ character, unresolved: [{ code, path, data }] }`, or `{ errors }` when the
/// homebrew does not load on the new ruleset (`homebrew-error`, the load errors in `data`).
pub fn upgrade_json(ruleset: &Ruleset, character: &Character) -> Json {
    match upgrade(ruleset, character) {
        Ok((file, unresolved)) => json!({
            "character": serde_json::to_value(&file).unwrap_or_default(),
            "unresolved": unresolved,
        }),
        Err(errors) => json!({ "errors": [{
            "code": "homebrew-error",
            "path": "/character/homebrew",
            "message": "the homebrew does not load on the upgraded ruleset",
            "data": { "errors": errors },
        }] }),
    }
}
