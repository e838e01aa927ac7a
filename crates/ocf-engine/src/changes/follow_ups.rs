//! Follow-ups a batch triggers (reconstructed; decisions.md, issue 12): a rules follow-up with
//! `on` is triggered by the first change of the batch for which `on` holds (once per batch),
//! `change` bound to what the change did (its record: `type`, `field`, `amount`, `tags`, …; a
//! `forEach` change's each element); one with `becomes` is triggered
//! when its condition is false on the sheet before the batch and true after it. Each triggered
//! follow-up is stored as an ephemeral offer in the file's `followUps` and listed in the output.

use ocf_formula::{Root, Value};
use ocf_model::{Id, StoredOffer};
use serde_json::json;

use super::{Applier, ChangeError, Scope, made_id};

/// The `becomes` conditions before the batch, by follow-up ID.
pub struct Snapshot {
    becomes: Vec<(String, bool)>,
}

impl Snapshot {
    pub(crate) fn take(applier: &Applier<'_, '_>) -> Snapshot {
        let mut becomes = Vec::new();
        for (id, decl) in applier.ruleset.follow_ups.iter() {
            if let Some(cond) = &decl.decl.becomes {
                let scope = Scope::in_pack(decl.pack.clone());
                let held = matches!(
                    applier.eval(cond.as_str(), &scope, ""),
                    Ok(Value::Bool(true))
                );
                becomes.push((id.to_owned(), held));
            }
        }
        Snapshot { becomes }
    }
}

pub(crate) fn triggered(
    applier: &mut Applier<'_, '_>,
    before: &Snapshot,
) -> Result<(), ChangeError> {
    let mut fired: Vec<(String, serde_json::Value)> = Vec::new();
    let follow_ups: Vec<(String, ocf_model::Declared<ocf_model::FollowUp>)> = applier
        .ruleset
        .follow_ups
        .iter()
        .map(|(id, d)| (id.to_owned(), d.clone()))
        .collect();
    for (id, decl) in &follow_ups {
        if let Some(on) = &decl.decl.on {
            for (i, record) in flattened(&applier.records) {
                if record.get("applied") == Some(&serde_json::Value::Bool(false)) {
                    continue;
                }
                let change = Value::from_json(&record).unwrap_or(Value::Null);
                let scope = Scope::in_pack(decl.pack.clone()).with_root(Root::Change, change);
                let at = format!("/followUps/{id}/on");
                if applier.eval_bool(on, &scope, &at)? {
                    fired.push((id.clone(), json!({ "on": i })));
                    break;
                }
            }
        }
        if let Some(cond) = &decl.decl.becomes {
            let was = before
                .becomes
                .iter()
                .find(|(f, _)| f == id)
                .is_some_and(|(_, held)| *held);
            let scope = Scope::in_pack(decl.pack.clone());
            let now = matches!(
                applier.eval(cond.as_str(), &scope, ""),
                Ok(Value::Bool(true))
            );
            if now && !was {
                fired.push((id.clone(), json!({ "becomes": true })));
            }
        }
    }
    for (follow_up, trigger) in fired {
        let offer = made_id(&follow_up, |id| {
            applier.file.follow_ups.iter().any(|o| o.id == id)
        });
        applier.file.follow_ups.push(StoredOffer {
            id: offer.clone(),
            follow_up: Id::from(follow_up.as_str()),
            source: None,
            params: Default::default(),
        });
        applier.follow_ups.push(json!({
            "id": offer,
            "followUp": follow_up,
            "trigger": trigger,
        }));
    }
    Ok(())
}

/// Each change's record with its index; a `forEach` change gives one record per element, each
/// with the change's `type`.
fn flattened(records: &[serde_json::Value]) -> Vec<(usize, serde_json::Value)> {
    let mut out = Vec::new();
    for (i, record) in records.iter().enumerate() {
        match record.get("each").and_then(|e| e.as_array()) {
            Some(each) => {
                for element in each {
                    let mut element = element.clone();
                    if let (Some(map), Some(t)) = (element.as_object_mut(), record.get("type")) {
                        map.insert("type".into(), t.clone());
                    }
                    out.push((i, element));
                }
            }
            None => out.push((i, record.clone())),
        }
    }
    out
}
