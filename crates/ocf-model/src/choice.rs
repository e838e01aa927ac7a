//! Choices of content and of the rules: slots the player fills with picks.

use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use crate::shape::{self, Never, Shape};
use crate::{Effect, Formula, Grant, Literal, Prerequisite, Query};

/// A choice (content `choices`, rules `choices`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Choice {
    /// Picks are saved under it.
    pub id: String,
    /// How many picks: a count (min and max) or `{ min?, max? }`. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<PickCount>,
    /// An activation condition: when false the choice is not applicable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Formula>,
    pub options: ChoiceOptions,
    /// `false`: never pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// A pending choice with no eligible unpicked option is the issue `no-eligible-option`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_option: Option<bool>,
    /// A pick failing it is `option-not-eligible`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eligible: Option<Formula>,
    /// A group key: an option picked in two choices of the group is `already-picked`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique_scope: Option<UniqueScope>,
    /// `false`: picks only run the choice's `effects`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activate: Option<bool>,
    /// Applied once per pick, with `pick` (and `slot`) bound.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<std::sync::Arc<Effect>>,
    /// Picked content's prerequisites are waived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waive_prerequisites: Option<bool>,
    /// A slotted choice: this many slots (an integer formula), each its own choice `<id>-<n>` with
    /// `slot` bound to `n`, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots: Option<Formula>,
    /// The choice's own recommendation: a formula giving an option.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommend: Option<Formula>,
}

/// `pick: 2` (exactly two) or `pick: { min: 0, max: 2 }`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum PickCount {
    Exactly(Formula),
    Range {
        #[serde(skip_serializing_if = "Option::is_none")]
        min: Option<Formula>,
        #[serde(skip_serializing_if = "Option::is_none")]
        max: Option<Formula>,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PickRange {
    min: Option<Formula>,
    max: Option<Formula>,
}

impl<'de> Deserialize<'de> for PickCount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, Formula, PickRange, Never>(
            deserializer,
            "a count or `{ min, max }`",
        )? {
            Shape::Scalar(count) => Ok(PickCount::Exactly(count)),
            Shape::Map(PickRange { min, max }) => Ok(PickCount::Range { min, max }),
            Shape::List(never) => match never {},
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum UniqueScope {
    /// Only the choices of the same owner activation share the group.
    Owner,
}

/// A choice's options: inline options (a list) or one source (a map).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ChoiceOptions {
    Inline(Vec<InlineOption>),
    Source(ChoiceSource),
}

/// Where a choice's options come from.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum ChoiceSource {
    /// Content of a type: `{ content: { type, where? } }`; an option is a content ID.
    Content { content: Query },
    /// Literal values: `{ values: [...], where? }`.
    Values {
        values: Vec<Literal>,
        #[serde(rename = "where", skip_serializing_if = "Option::is_none")]
        where_: Option<Formula>,
    },
    /// A formula listing the values: `{ formula }`.
    Formula { formula: Formula },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ChoiceSourceMap {
    content: Option<Query>,
    values: Option<Vec<Literal>>,
    r#where: Option<Formula>,
    formula: Option<Formula>,
}

impl<'de> Deserialize<'de> for ChoiceOptions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, Never, ChoiceSourceMap, Vec<InlineOption>>(
            deserializer,
            "a list of inline options or one of `{ content }`, `{ values, where? }`, `{ formula }`",
        )? {
            Shape::List(options) => Ok(ChoiceOptions::Inline(options)),
            Shape::Map(ChoiceSourceMap {
                content,
                values,
                r#where,
                formula,
            }) => {
                let source = match (content, values, formula) {
                    (Some(content), None, None) if r#where.is_none() => {
                        ChoiceSource::Content { content }
                    }
                    (None, Some(values), None) => ChoiceSource::Values {
                        values,
                        where_: r#where,
                    },
                    (None, None, Some(formula)) if r#where.is_none() => {
                        ChoiceSource::Formula { formula }
                    }
                    _ => {
                        return Err(D::Error::custom(
                            "options have exactly one of `content`, `values` (with an optional `where`), \
                             `formula`",
                        ));
                    }
                };
                Ok(ChoiceOptions::Source(source))
            }
            Shape::Scalar(never) => match never {},
        }
    }
}

/// An option written in the choice, with content of its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InlineOption {
    pub id: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prerequisites: Vec<Prerequisite>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<std::sync::Arc<Effect>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grants: Vec<Grant>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<Choice>,
}
