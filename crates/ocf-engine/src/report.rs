//! Pieces of the calls' JSON output that several parts share, below them all so that
//! [`crate::sheet`] only assembles: how issues are ranked (EC "Order"), a choice path's JSON
//! (change.schema.json's `choicePath`) and an activation named as a source (EC "Effects": "An
//! instance's source is `{ type: item | template | rules, id, entry? }`").

use serde_json::{Map, Value as Json};

use crate::db::{Activation, Via};
use crate::effects::{Source, SourceKind};

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
