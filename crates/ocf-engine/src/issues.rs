//! The sheet's issues found outside the choices (EC "Pending choices and issues", "Order"): the
//! rules' (`constraint-failed`, `too-many-copies`), `content-hidden`, and `prerequisite-not-met`
//! for active content; ranked as [`crate::report`] ranks every issue. [`crate::choices`] finds
//! the choices' issues; [`crate::sheet`] puts them together.

use crate::context::{Bindings, Mode, SelfRef, SheetContext};
use crate::db::{Activation, CharacterInput, ItemKey};
use crate::report::{RankedIssue, activation_source, kind_rank};
use ocf_formula::{Context, Value};
use serde_json::{Map, Value as Json, json};

/// The rules' issues (`constraint-failed`, `too-many-copies`) and `content-hidden`.
pub(crate) fn rules_issues(
    db: &dyn salsa::Database,
    character: CharacterInput,
    acts: &crate::db::Activations,
) -> Vec<RankedIssue> {
    let ruleset = character.ruleset(db).ruleset(db);
    let mut out = Vec::new();
    let copies: Vec<crate::db::CopyInput> = character
        .features(db)
        .iter()
        .chain(character.inventory(db).iter())
        .copied()
        .collect();
    // constraint-failed: each constraint whose check is false; with `copies`, once per copy of the
    // query's type it fails on, `self` and `item` that copy's (decisions.md, "Constraints").
    for (id, constraint) in ruleset.constraints.iter() {
        let pack = constraint.pack.as_str();
        let mut runs: Vec<(Bindings<'_>, Option<String>)> = Vec::new();
        match &constraint.decl.copies {
            None => runs.push((Bindings::rules(pack), None)),
            Some(query) => {
                for copy in &copies {
                    let of_type = ruleset.item(copy.item(db)).and_then(|e| e.type_name())
                        == Some(query.r#type.as_str());
                    if !of_type {
                        continue;
                    }
                    let bindings = Bindings {
                        pack,
                        self_ref: SelfRef::Copy(*copy),
                        item: Some(ItemKey::of_copy(db, *copy)),
                        pick: None,
                        entry: None,
                        slot: None,
                    };
                    if let Some(w) = &query.r#where {
                        let ctx = SheetContext::new(db, character, Mode::Sheet, bindings.clone());
                        let holds = crate::formula::parse_in(ruleset, w.as_str())
                            .and_then(|f| f.evaluate(&ctx));
                        if holds != Ok(Value::Bool(true)) {
                            continue;
                        }
                    }
                    runs.push((bindings, Some(copy.id(db).clone())));
                }
            }
        }
        for (bindings, entry) in runs {
            let ctx = SheetContext::new(db, character, Mode::Sheet, bindings);
            let holds = crate::formula::parse_in(ruleset, constraint.decl.check.as_str())
                .and_then(|f| f.evaluate(&ctx));
            if holds == Ok(Value::Bool(true)) {
                continue;
            }
            let mut data = Map::new();
            for (key, formula) in constraint.decl.data.iter() {
                let value = crate::formula::parse_in(ruleset, formula.as_str())
                    .and_then(|f| f.evaluate(&ctx))
                    .map(|v| v.to_json())
                    .unwrap_or(Json::Null);
                data.insert(key.to_owned(), value);
            }
            if let Some(entry) = entry {
                data.insert("entry".into(), entry.into());
            }
            out.push((
                0,
                kind_rank("constraint-failed"),
                json!({ "code": "constraint-failed", "id": id, "source": { "type": "rules", "id": id }, "data": data }),
            ));
        }
    }
    // too-many-copies: by type in ruleset order, the type's `max` first, then its items' `perItem`
    // in the order of their first copy.
    for (type_name, decl) in ruleset.content_types.iter() {
        let Some(limits) = &decl.decl.copies else {
            continue;
        };
        let of_type: Vec<&String> = copies
            .iter()
            .map(|c| c.item(db))
            .filter(|item| ruleset.item(item).and_then(|e| e.type_name()) == Some(type_name))
            .collect();
        let mut issue = |id: &str, data: Json| {
            out.push((
                0,
                kind_rank("too-many-copies"),
                json!({ "code": "too-many-copies", "id": id, "source": { "type": "rules", "id": id }, "data": data }),
            ));
        };
        if let Some(max) = limits.max
            && of_type.len() > max as usize
        {
            issue(
                type_name,
                json!({ "type": type_name, "max": max, "count": of_type.len() }),
            );
        }
        if let Some(per_item) = limits.per_item {
            let mut seen: Vec<&String> = Vec::new();
            for item in &of_type {
                if seen.contains(item) {
                    continue;
                }
                seen.push(item);
                let count = of_type.iter().filter(|i| *i == item).count();
                if count > per_item as usize {
                    issue(
                        item,
                        json!({ "item": item, "perItem": per_item, "count": count }),
                    );
                }
            }
        }
    }
    // content-hidden: owned or picked hidden content, on its own activation.
    for (i, a) in acts.list.iter().enumerate() {
        if !matches!(a.via, crate::db::Via::Copy | crate::db::Via::Pick) {
            continue;
        }
        if ruleset.item(&a.item).is_some_and(|e| e.hidden) {
            out.push((
                i + 1,
                kind_rank("content-hidden"),
                json!({
                    "code": "content-hidden",
                    "id": a.item,
                    "source": activation_source(a).to_json(),
                    "data": { "item": a.item },
                }),
            ));
        }
    }
    out
}

/// `prerequisite-not-met` for each false prerequisite of active holder content not waived, as
/// `(activation rank, kind rank, issue)`.
pub(crate) fn activation_issues(
    db: &dyn salsa::Database,
    character: CharacterInput,
    list: &[Activation],
) -> Vec<RankedIssue> {
    let ruleset = character.ruleset(db).ruleset(db);
    let mut out = Vec::new();
    for (i, a) in list.iter().enumerate() {
        if a.applied || a.waived {
            continue;
        }
        let Some(entry) = ruleset.item(&a.item) else {
            continue;
        };
        let pack = entry.pack_of("prerequisites");
        for prerequisite in &entry.item.prerequisites {
            let bindings = Bindings::activation(db, character, pack, a);
            let ctx = SheetContext::new(db, character, Mode::Sheet, bindings);
            let holds = crate::formula::parse_in(ruleset, prerequisite.check.as_str())
                .ok()
                .and_then(|f| f.evaluate(&ctx as &dyn Context).ok());
            if holds != Some(Value::Bool(true)) {
                out.push((
                    i + 1,
                    kind_rank("prerequisite-not-met"),
                    json!({
                        "code": "prerequisite-not-met",
                        "id": format!("{}/{}", a.item, prerequisite.id),
                        "source": activation_source(a).to_json(),
                        "data": {},
                    }),
                ));
            }
        }
    }
    out
}
