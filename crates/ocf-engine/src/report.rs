//! Pieces of the calls' JSON output that several parts share, below them all so that
//! [`crate::sheet`] only assembles: how issues are ranked (EC "Order"), a choice path's JSON
//! (change.schema.json's `choicePath`), an activation named as a source (EC "Effects": "An
//! instance's source is `{ type: item | template | rules, id, entry? }`"), and an action named
//! as the listings name it (EC computeSheet "Actions", offers).

use ocf_model::{Action, Namespace, Ruleset};
use serde_json::{Map, Value as Json};

use crate::db::{Activation, Source, SourceKind, Via};

/// An issue with what orders it: its activation's rank (the rules 0, activation `i` at `i + 1`),
/// then its kind's rank.
pub(crate) type RankedIssue = (usize, usize, Json);

/// The issue kinds in the order an activation's issues are listed (EC, "Order").
const ISSUE_ORDER: [&str; 10] = [
    "prerequisite-not-met",
    "no-eligible-option",
    "constraint-failed",
    "too-many-copies",
    "choice-not-applicable",
    "too-many-picks",
    "option-not-eligible",
    "already-picked",
    "content-hidden",
    "immune",
];

pub(crate) fn kind_rank(kind: &str) -> usize {
    ISSUE_ORDER
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(ISSUE_ORDER.len())
}

/// A choice path (change.schema.json's `choicePath`): `{ entry?, choice: [key, option, key, …] }`.
pub(crate) fn path_json(entry: Option<&str>, segments: &[String]) -> Json {
    let mut m = Map::new();
    if let Some(entry) = entry {
        m.insert("entry".into(), entry.into());
    }
    m.insert(
        "choice".into(),
        segments.iter().map(|p| Json::from(p.as_str())).collect(),
    );
    Json::Object(m)
}

/// An activation named as a source: `{ type, id, entry? }`.
pub fn activation_source(a: &Activation) -> Source {
    Source {
        kind: if a.via == Via::Template {
            SourceKind::Template
        } else {
            SourceKind::Item
        },
        id: a.item.to_string(),
        entry: a.entry.as_deref().map(str::to_owned),
    }
}

pub fn op_name(op: ocf_model::Op) -> &'static str {
    use ocf_model::Op::*;
    match op {
        Set => "set",
        Add => "add",
        Multiply => "multiply",
        AtLeast => "atLeast",
        AtMost => "atMost",
        Grant => "grant",
        RollModifier => "rollModifier",
        Option => "option",
        Changes => "changes",
    }
}

/// The `source` an activation's actions are listed with: content that isn't the copy's own item
/// (picked, granted) names itself; an applied entry's own content doesn't; content with no copy
/// always does.
pub(crate) fn listing_source(a: &Activation) -> Option<String> {
    let own = matches!(a.via, Via::Copy) || (a.applied && a.parent.is_none());
    match (&a.entry, own) {
        (Some(_), true) => None,
        _ => Some(a.item.to_string()),
    }
}

/// `use` lists under the used action's qualified ID; an inline action as `<item>#<id>`.
pub(crate) fn action_id(
    ruleset: &Ruleset,
    action: &Action,
    pack: &str,
    owner: &str,
) -> Option<String> {
    match (&action.r#use, &action.id) {
        (Some(used), _) => Some(resolve_action(ruleset, pack, used.as_str())),
        (None, Some(id)) => Some(format!("{owner}#{id}")),
        (None, None) => None,
    }
}

pub(crate) fn resolve_action(ruleset: &Ruleset, pack: &str, id: &str) -> String {
    ruleset
        .resolve(pack, id, Namespace::Action)
        .unwrap_or_else(|| id.to_owned())
}
