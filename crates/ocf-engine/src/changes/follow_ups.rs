//! Follow-ups a batch triggers (reconstructed; decisions.md, issue 12). A follow-up with `on` is
//! triggered by the first change of the batch for which `on` holds (once per batch), `change`
//! bound to what the change did (its record: `type`, `field`, `amount`, `tags`, …; a `forEach`
//! change's each element) and `batch` to the records up to and including it; one with `becomes` is triggered when its condition is false on the
//! sheet before the batch and true after it. Both are looked for among the rules' follow-ups and
//! those of the active content (its content type's, its item's, a copy's templates'; EA: "one the
//! content declares (or its content type)"), each activation's with its `self` and `item`; content
//! that was not active before the batch counts as false before it. Each triggered follow-up is
//! stored as an ephemeral offer in the file's `followUps` (a content one with the content as its
//! `source`, so computeSheet lists it under its activation), with its declared `params` evaluated
//! as its trigger saw the character ([`params_of`]), and listed in the output.

use ocf_formula::{Root, Value};
use ocf_model::{Formula, Id, Keyed, Literal, StoredOffer};
use serde_json::json;

use super::applier::{Applier, made_id};
use super::batch::ChangeError;
use super::eval::{OwnedSelf, Scope};

/// A follow-up with a trigger where it is declared: its qualified ID, the content that offers it
/// (none for the rules'), the entry that is `self`, and what its formulas see.
struct Trigger {
    id: String,
    source: Option<String>,
    entry: Option<String>,
    on: Option<Formula>,
    becomes: Option<Formula>,
    /// The follow-up's declared `params`, evaluated when it is triggered.
    params: Keyed<Formula>,
    scope: Scope,
}

/// A content follow-up with a trigger, on its activation.
struct Found {
    id: String,
    pack: String,
    on: Option<Formula>,
    becomes: Option<Formula>,
    params: Keyed<Formula>,
    activation: crate::db::Activation,
}

/// The `becomes` conditions before the batch, by follow-up ID and entry.
pub struct Snapshot {
    becomes: Vec<(String, Option<String>, bool)>,
}

impl Snapshot {
    pub(crate) fn take(applier: &Applier<'_, '_>) -> Snapshot {
        let mut becomes = Vec::new();
        for t in triggers(applier) {
            if let Some(cond) = &t.becomes {
                let held = matches!(
                    applier.eval(cond.as_str(), &t.scope, ""),
                    Ok(Value::Bool(true))
                );
                becomes.push((t.id, t.entry, held));
            }
        }
        Snapshot { becomes }
    }
}

/// Every follow-up with `on` or `becomes`: the rules' in ruleset order, then the active
/// content's in activation order (per activation its content type's, its item's, then a copy's
/// templates'), each listed once per (follow-up, entry).
fn triggers(applier: &Applier<'_, '_>) -> Vec<Trigger> {
    let mut out = Vec::new();
    for (id, decl) in applier.ruleset.follow_ups.iter() {
        let f = &decl.decl;
        if f.on.is_none() && f.becomes.is_none() {
            continue;
        }
        out.push(Trigger {
            id: id.to_owned(),
            source: None,
            entry: None,
            on: f.on.clone(),
            becomes: f.becomes.clone(),
            params: f.params.clone(),
            scope: Scope::in_pack(decl.pack.clone()),
        });
    }
    // Only the activations with a triggered follow-up are taken out of the session: most
    // batches meet none, and the activation list of a large character is long.
    let c = applier.input();
    let found: Vec<Found> = applier.deep(move |db| {
        let ruleset = c.ruleset(db).ruleset(db);
        let mut found = Vec::new();
        for a in &crate::db::activations(db, c).list {
            if a.via == crate::db::Via::Template {
                continue;
            }
            for d in crate::offers::declarations(ruleset, a) {
                let f = d.follow_up;
                if f.on.is_some() || f.becomes.is_some() {
                    found.push(Found {
                        id: d.id.clone(),
                        pack: d.pack.to_owned(),
                        on: f.on.clone(),
                        becomes: f.becomes.clone(),
                        params: f.params.clone(),
                        activation: a.clone(),
                    });
                }
            }
        }
        found
    });
    let mut seen = std::collections::HashSet::new();
    for Found {
        id,
        pack,
        on,
        becomes,
        params,
        activation: a,
    } in found
    {
        {
            if !seen.insert((id.clone(), a.entry.clone(), a.item.clone())) {
                continue;
            }
            let mut scope = Scope::in_pack(pack);
            scope.self_ref = match (a.copy, a.applied_entry) {
                (Some(copy), _) => OwnedSelf::Copy(copy),
                (None, Some(i)) => match applier.file.applied.get(i) {
                    Some(entry) => {
                        OwnedSelf::Value(crate::view::applied_self(&applier.ruleset, entry))
                    }
                    None => OwnedSelf::None,
                },
                (None, None) => OwnedSelf::None,
            };
            scope.item = Some((a.item.to_string(), a.templates.to_vec()));
            out.push(Trigger {
                id,
                source: Some(a.item.to_string()),
                entry: a.entry.as_deref().map(str::to_owned),
                on,
                becomes,
                params,
                scope,
            });
        }
    }
    out
}

pub(crate) fn triggered(
    applier: &mut Applier<'_, '_>,
    before: &Snapshot,
) -> Result<(), ChangeError> {
    let mut fired: Vec<(String, Option<String>, serde_json::Value, Keyed<Literal>)> = Vec::new();
    for t in triggers(applier) {
        if let Some(on) = &t.on {
            for (i, record) in flattened(&applier.records) {
                if record.get("applied") == Some(&serde_json::Value::Bool(false)) {
                    continue;
                }
                let change = Value::from_json(&record).unwrap_or(Value::Null);
                // `batch` is what the batch did up to this change, as a change's own formulas
                // see it: a rule judged on one damage split over several changes (5E instant
                // death) sums them (decisions.md, issue 12 part 3).
                let mut scope = t.scope.clone().with_root(Root::Change, change);
                // Only a formula that names `batch` can read it: the others don't pay for the
                // list up to this change (a batch of N changes would cost N² otherwise).
                if on.as_str().contains("batch") {
                    let so_far = applier.batch_list[..=i].to_vec();
                    scope = scope.with_root(Root::Batch, Value::list(so_far));
                }
                let at = format!("/followUps/{}/on", t.id);
                if applier.eval_bool(on, &scope, &at)? {
                    let params = params_of(applier, &t, Some(scope))?;
                    fired.push((t.id.clone(), t.source.clone(), json!({ "on": i }), params));
                    break;
                }
            }
        }
        if let Some(cond) = &t.becomes {
            let was = before
                .becomes
                .iter()
                .find(|(f, e, _)| *f == t.id && *e == t.entry)
                .is_some_and(|(_, _, held)| *held);
            let now = matches!(
                applier.eval(cond.as_str(), &t.scope, ""),
                Ok(Value::Bool(true))
            );
            if now && !was {
                let params = params_of(applier, &t, None)?;
                fired.push((
                    t.id.clone(),
                    t.source.clone(),
                    json!({ "becomes": true }),
                    params,
                ));
            }
        }
    }
    for (follow_up, source, trigger, params) in fired {
        let local = follow_up
            .rsplit_once('#')
            .map_or(follow_up.as_str(), |(_, l)| l);
        let offer = made_id(local, |id| {
            applier.file.follow_ups.iter().any(|o| o.id == id)
        });
        applier.file.follow_ups.push(StoredOffer {
            id: offer.clone(),
            follow_up: Id::from(follow_up.as_str()),
            source: source.as_deref().map(Id::from),
            params,
        });
        let mut listed = json!({
            "id": offer,
            "followUp": follow_up,
            "trigger": trigger,
        });
        if let Some(source) = source {
            listed["source"] = source.into();
        }
        applier.follow_ups.push(listed);
    }
    Ok(())
}

/// A triggered follow-up's `params`, evaluated as its trigger saw the character: `scope` is the
/// `on` formula's at the change that triggered it (`change` that change's record), a `becomes`
/// follow-up's own (no `change`); `batch` is every record of the batch, which is done when the
/// offer is stored. A value giving `null` is left out and dice are kept as their notation, as an
/// `offerFollowUp`'s and a derived offer's params are (EA "Parameters": "A handoff's and a
/// follow-up's `params` carry dice the same way ... leave out a `null` the same way").
fn params_of(
    applier: &Applier<'_, '_>,
    t: &Trigger,
    on_scope: Option<Scope>,
) -> Result<Keyed<Literal>, ChangeError> {
    let mut params = Keyed::<Literal>::default();
    if t.params.is_empty() {
        return Ok(params);
    }
    let scope = on_scope
        .unwrap_or_else(|| t.scope.clone())
        .with_root(Root::Batch, applier.batch_value());
    for (name, formula) in t.params.iter() {
        let at = format!("/followUps/{}/params/{name}", t.id);
        let value = applier.eval(formula.as_str(), &scope, &at)?;
        if !matches!(value, Value::Null) {
            params.0.insert(name.to_owned(), value.to_json());
        }
    }
    Ok(params)
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
