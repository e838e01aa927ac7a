//! Roll modifiers (`op: rollModifier`, `value: { kind, … }`): the fixed set of data/roll-modifiers.json
//! that the chapters name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Formula;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum RollModifierKind {
    Advantage,
    Disadvantage,
    NoAdvantage,
    NoDisadvantage,
    Reroll,
    MinimumFace,
    Explode,
    MultiplyDice,
    Multiply,
    StepDie,
    SetFaces,
    PoolDice,
}

/// A roll modifier. Which arguments a kind takes (`reroll`: `below`, `once`, `count`; `minimumFace`:
/// `value`; `explode`: `at`; `multiplyDice`/`multiply`: `factor`; `stepDie`: `steps`; `setFaces`:
/// `faces`; `poolDice`: `count`, `part`) is checked by the loader.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RollModifier {
    pub kind: RollModifierKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub once: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Formula>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faces: Vec<Formula>,
    /// `poolDice`: the tag of the dice part that gets the dice (else the step's first dice part).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
}
