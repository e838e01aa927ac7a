//! Follow-ups: actions offered after something happened (rules, content and content types declare them).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Change, Destination, Formula, Id, Keyed};

/// A follow-up. A derived offer holds while `while` does; an ephemeral one is stored by `offerFollowUp`.
/// A `create` offer creates a linked character from a creation start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FollowUp {
    pub id: String,
    /// The action the offer runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Id>,
    /// A derived offer's condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#while: Option<Formula>,
    /// What triggers the offer (kept as a formula; chapter lost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<Formula>,
    /// A condition that, once it becomes true, makes the offer (kept as a formula; chapter lost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub becomes: Option<Formula>,
    /// Changes the offer proposes instead of an action.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<Destination>,
    /// A `create` offer: needs `while` and none of `on`, `becomes`, `action`, `changes`, `to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<bool>,
    /// A `create` offer's link slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<Id>,
    /// A `create` offer's creation start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Id>,
    /// Parameter formulas for the action.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub params: Keyed<Formula>,
}
