//! Pauses, answers and the serializable `state` (DA "Paused actions and logs"; EA's lost
//! `#checkpoints-and-the-policy` and `#replaying-from-answers`, reconstructed in
//! docs/spec/engine-interface.md, "startAction / continueAction").
//!
//! The state is the call's own input (everything but the ruleset, the character and the dice
//! function), the answers given so far and the faces the engine rolled by itself. Continuing runs
//! the action again from the start with one more answer: what it computes follows from those, so a
//! replay gives the same result byte for byte, and any process holding the ruleset and the
//! character can continue.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// The version of the state's shape; a state of another version is `invalid-state`.
pub const STATE_VERSION: u32 = 1;

/// `action`: which action to run, as computeSheet's `actions` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionRef {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_up: Option<String>,
}

/// What the engine does at a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Then {
    Auto,
    Pause,
}

/// A policy rule: the first that matches a checkpoint decides it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyRule {
    /// `roll`, `choice` or `allocate`; any when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Matches when one of these matches one of the step's tags (a tag matches itself and the
    /// tags below it); any step when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Matches the step's full path (`attack`, `saves[1]/check/save`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    pub then: Then,
}

/// The checkpoint policy (DA "Checkpoints and policy"): the defaults are the chapter's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Policy {
    #[serde(default = "auto")]
    pub dice: Then,
    #[serde(default = "pause")]
    pub choices: Then,
    #[serde(default = "auto")]
    pub allocations: Then,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<PolicyRule>,
}

fn auto() -> Then {
    Then::Auto
}
fn pause() -> Then {
    Then::Pause
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            dice: Then::Auto,
            choices: Then::Pause,
            allocations: Then::Auto,
            rules: Vec::new(),
        }
    }
}

/// One answer to one pause. Exactly one of `faces` (a dice pause), `option` (a choice pause),
/// `amounts` (an allocation) or `outcome` (a handoff); `step`, when given, must be the paused
/// step's path.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Answer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faces: Option<Vec<i64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amounts: Option<Map<String, Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Map<String, Json>>,
}

impl Answer {
    pub fn faces(faces: Vec<i64>) -> Answer {
        Answer {
            faces: Some(faces),
            ..Answer::default()
        }
    }

    pub fn option(option: impl Into<String>) -> Answer {
        Answer {
            option: Some(option.into()),
            ..Answer::default()
        }
    }

    /// What kind of pause this answers, for `answer-mismatch`.
    pub fn kind(&self) -> &'static str {
        match (&self.faces, &self.option, &self.amounts, &self.outcome) {
            (Some(_), None, None, None) => "dice",
            (None, Some(_), None, None) => "choice",
            (None, None, Some(_), None) => "allocation",
            (None, None, None, Some(_)) => "handoff",
            _ => "malformed",
        }
    }
}

/// startAction's input, the ruleset and the character aside (EA "Starting an action").
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartInput {
    pub action: ActionRef,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Json>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub situational: Map<String, Json>,
    #[serde(default)]
    pub policy: Policy,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub links: Map<String, Json>,
    /// Role to views `{ id, values }`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub participants: Map<String, Json>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Answer>,
}

/// A paused action's `state`: plain JSON another process can continue from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct State {
    pub version: u32,
    /// The character the action runs on (its file's `id`): continuing on another is
    /// `invalid-state`.
    pub character: String,
    /// The call as started, `answers` holding every answer given so far.
    pub input: StartInput,
    /// Every face the engine's dice function gave, in the order asked: a replay takes them again
    /// instead of rolling.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rolled: Vec<i64>,
}

/// continueAction's input, the ruleset and the character aside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContinueInput {
    pub state: State,
    pub answer: Answer,
}
