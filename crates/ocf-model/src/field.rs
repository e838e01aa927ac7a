//! Declarations of values: character fields, item fields, template fields, state keys, computed values
//! and the fields of participants' and linked characters' views.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Computed, Formula, Id, Keyed, Literal, Tag, TagEntry};

/// The type of a field, an item field, a state key or a parameter (EC: "`integer`, `decimal`,
/// `boolean`, `string`, `enum`, `id`, `set`, `dice`").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FieldType {
    Integer,
    Decimal,
    Boolean,
    String,
    Enum,
    Id,
    Set,
    Dice,
}

/// How a decimal becomes a whole number (`settings.rounding`, a field's or an effect's `rounding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Rounding {
    /// Toward negative infinity: the spec's default.
    Floor,
    /// Toward positive infinity ("rounding up").
    Ceil,
    /// To the nearest, halves away from zero.
    Round,
}

/// Which competing option the rules recommend (a field's `recommend`, `settings.competing.recommend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Recommend {
    Highest,
    Lowest,
    First,
    Last,
}

/// A character field (rules document `fields`, keyed by ID).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FieldDecl {
    pub r#type: FieldType,
    /// For `id` and `set`: what the IDs name, `field` or a content type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<Id>,
    /// For `enum` (and `set` of literal values): the allowed values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Literal>,
    /// An input field: its value is saved in the character file (`values`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<bool>,
    /// A derived field's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula: Option<Formula>,
    /// The starting value of an input or plain field, a literal of the field's type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Literal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Formula>,
    /// Named bounds the final value should keep; outside one is the issue `out-of-limits`.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub limits: Keyed<Limit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounding: Option<Rounding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommend: Option<Recommend>,
    /// Written tags and `{ formula }` entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagEntry>,
    /// Which tags a `set` field of tags takes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<Tag>,
    /// A `string` field whose non-blank value names this field on the sheet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_from: Option<Id>,
    /// An absorbing field (rules-and-fields.md "Absorbing and overflow", reconstructed): harm
    /// (a negative adjust) aimed at one of these fields is taken off this field first, down to its
    /// `min` (else 0); only what is left reaches the field (5E temporary hit points).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absorbs: Vec<Id>,
    /// Overflow (reconstructed): harm that would take this field past its `min` stops there, and
    /// what is left goes on to this field, routed again through its absorbing fields and overflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow: Option<Id>,
}

/// One named bound of a field's `limits`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Limit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Formula>,
}

/// An item field a content type declares (`contentTypes.<type>.fields`), and a template field
/// (`templateFields`, keyed by name). Item values of `integer`, `decimal`, `boolean` and `dice` fields
/// are formulas; the others are literals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ItemFieldDecl {
    pub r#type: FieldType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<Id>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Literal>,
    /// Read as if the item had written it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Literal>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<Tag>,
}

/// A per-copy state key (declared by a content type, an item or a template).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StateDecl {
    pub r#type: FieldType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<Id>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Literal>,
    /// A literal, or `{ formula }` evaluated as addItem does (input fields only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Computed<Literal>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Formula>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<Tag>,
}

/// A field of another character's view: a participant role's or a link slot's `fields`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ViewFieldDecl {
    pub r#type: FieldType,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Literal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Literal>,
}

/// The type of a computed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ComputedType {
    Integer,
    Decimal,
    Boolean,
    String,
}

/// A per-copy computed value (`computed`, keyed by name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComputedDecl {
    pub r#type: ComputedType,
    pub formula: Formula,
}
