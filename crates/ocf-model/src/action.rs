//! Actions (action.schema.json): on content types, items, and the rules as shared actions.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::shape::{self, Never, Shape};
use crate::{FieldType, Formula, Id, Keyed, Literal, Step, Tag, ViewFields};

/// An action, or (with `use`) a content type's or item's use of a rules action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Action {
    /// Required unless the action is a `use` (then it is listed under the used action's ID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A rules action this one uses, optionally fixing `params`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#use: Option<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<Formula>,
    /// Declared parameters, or with `use` fixed parameter values.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub params: Keyed<ParamEntry>,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub participants: Keyed<Role>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<Results>,
    /// On content: `holder` (default) or `applied`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ActionScope>,
}

pub type ActionScope = crate::Scope;

/// A parameter: declared (a map) or, in a `use`, fixed to a formula (a scalar).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ParamEntry {
    Fixed(Formula),
    Declared(ParamDecl),
}

impl<'de> Deserialize<'de> for ParamEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, Formula, ParamDecl, Never>(
            deserializer,
            "a parameter declaration `{ type, … }` or, in a `use`, a formula",
        )? {
            Shape::Scalar(formula) => Ok(ParamEntry::Fixed(formula)),
            Shape::Map(decl) => Ok(ParamEntry::Declared(decl)),
            Shape::List(never) => match never {},
        }
    }
}

/// A parameter, declared like state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ParamDecl {
    pub r#type: FieldType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Literal>,
    /// `field`, or a content type, for an `id` parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<Id>,
    /// Which fields or items the parameter takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#where: Option<Formula>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Literal>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<Tag>,
    /// The label when there is no text key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// A participant role.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Role {
    /// Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u32>,
    /// Default unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    /// Its view fields, or the name of a `viewFields` set (expanded at load).
    #[serde(default, skip_serializing_if = "ViewFields::is_empty")]
    pub fields: ViewFields,
    /// The pack participants are expected to use (checked by the build only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack: Option<Id>,
}

/// The results an action's outcome can have.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum Results {
    List(Vec<String>),
    Bands { bands: Id },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BandResults {
    bands: Id,
}

impl<'de> Deserialize<'de> for Results {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, Never, BandResults, Vec<String>>(
            deserializer,
            "a list of result IDs or `{ bands: <set> }`",
        )? {
            Shape::List(results) => Ok(Results::List(results)),
            Shape::Map(BandResults { bands }) => Ok(Results::Bands { bands }),
            Shape::Scalar(never) => match never {},
        }
    }
}
