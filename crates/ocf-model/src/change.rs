//! Changes (change.schema.json): what applyChanges applies and what actions, options, effects and
//! follow-ups propose.

use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use crate::checked::{self, checked_struct};
use crate::shape::{self, Never, Shape};
use crate::{Computed, Formula, Id, Keyed, Literal, Query, TagEntry};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ChangeType {
    Set,
    Adjust,
    AddItem,
    RemoveItem,
    Equip,
    SetQuantity,
    AdjustQuantity,
    SetState,
    AdjustState,
    ApplyEffect,
    RemoveEffect,
    ToggleEffect,
    ApplyTemplate,
    RemoveTemplate,
    Choose,
    Unchoose,
    FinishCreation,
    OfferFollowUp,
    ClearFollowUp,
    SetExtension,
    SetHomebrew,
}

/// Formulas keyed by name, each a formula or `{ formula }`.
fn formulas_or_wrapped<'de, D: Deserializer<'de>>(d: D) -> Result<Keyed<Formula>, D::Error> {
    let map = Keyed::<Computed<Formula>>::deserialize(d)?;
    Ok(Keyed(
        map.0
            .into_iter()
            .map(|(k, v)| {
                let f = match v {
                    Computed::Literal(f) => f,
                    Computed::Formula { formula } => formula,
                };
                (k, f)
            })
            .collect(),
    ))
}

checked_struct! {
    /// A change. One struct holds the keys of every change type, each documented with the types that take
    /// it; reading a change checks that each written key belongs to its `type` (catalogue §3.10).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase", try_from = "RawChange")]
    pub struct Change read as RawChange {
        required {
            pub r#type: ChangeType,
        }
        optional {
            /// Any proposed change: skipped when false.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub when: Option<Formula>,
            /// Any proposed change: repeated per element of the list, with `x` bound.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub for_each: Option<Formula>,
            /// `set`, `adjust`: a field ID, or `{ formula }` naming one.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub field: Option<FieldRef>,
            /// `set`, `setQuantity`, `setState`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub value: Option<Formula>,
            /// `adjust`, `adjustQuantity`, `adjustState`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub by: Option<Formula>,
            /// `adjust`: the change's tags (`damage.fire`), matched by incoming-change effects.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub tags: Vec<TagEntry>,
            /// `adjust`: one change per tag group of a roll's items.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub split: Option<Split>,
            /// `adjust`: the receiving player's situational choices on the change, by qualified or
            /// local ID (reconstructed; decisions.md, issue 12).
            #[serde(default, skip_serializing_if = "Keyed::is_empty")]
            pub situational: Keyed<Literal>,
            /// `adjust`: faces for the dice incoming-change effects roll (written by applyChanges for replay).
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub faces: Vec<i64>,
            /// The copy (or applied entry) a change is for, or an `addItem`'s new copy.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub entry: Option<EntryRef>,
            /// Copies by query: `removeItem`, `equip`, `setQuantity`, `adjustQuantity`, `setState`,
            /// `adjustState`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub copies: Option<Query>,
            /// With `copies`: at most this many.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub limit: Option<Formula>,
            /// `equip`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub equipped: Option<Formula>,
            /// `setState`, `adjustState`: the state key.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub key: Option<String>,
            /// `setState`, `adjustState`: `self`, the pick that activated the running content.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub pick: Option<String>,
            /// `setState`, `adjustState`: picks by query.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub picks: Option<EntryQuery>,
            /// Applied entries by query: `removeEffect`, `toggleEffect`, `setState`, `adjustState`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub applied: Option<EntryQuery>,
            /// `applyEffect`: a string formula giving the applied content's ID.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub source: Option<Formula>,
            /// `applyEffect` (optional), `removeEffect`, `toggleEffect`: the applied entry's ID;
            /// `clearFollowUp`: the stored offer's ID.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub id: Option<String>,
            /// `applyEffect`, `toggleEffect`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub active: Option<Formula>,
            /// `applyEffect`: state values, formulas, each written as one or as `{ formula }` (an
            /// action passes a state value reading `batch` on so, EA "Other steps").
            #[serde(default, skip_serializing_if = "Keyed::is_empty", deserialize_with = "formulas_or_wrapped")]
            #[schemars(with = "Keyed<Computed<Formula>>")]
            pub state: Keyed<Formula>,
            /// `applyTemplate`, `removeTemplate`: a string formula giving the template's ID.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub template: Option<Formula>,
            /// `choose`, `unchoose`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub path: Option<ChoicePath>,
            /// `choose`, `unchoose` (optional there): the option, a formula.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub option: Option<Formula>,
            /// `offerFollowUp`: the follow-up's ID.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub follow_up: Option<Id>,
            /// `offerFollowUp`: parameter formulas.
            #[serde(default, skip_serializing_if = "Keyed::is_empty")]
            pub params: Keyed<Formula>,
            /// `setExtension` (reconstructed): the namespace of `extensions` it sets.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub namespace: Option<String>,
            /// `setExtension` (reconstructed): the app data, any JSON; `null` removes the namespace.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub data: Option<serde_json::Value>,
            /// `setHomebrew` (reconstructed): the character's new homebrew; absent removes it.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub homebrew: Option<crate::Homebrew>,
        }
    }
}

/// A change's field: an ID, or `{ formula }` giving one.
pub type FieldRef = Computed<Id>;

/// `split: { roll, by }`: one change per distinct tag under `by` among the roll's items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Split {
    pub roll: String,
    pub by: String,
}

/// `applied: { where, limit? }` and `picks: { where, limit? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EntryQuery {
    pub r#where: Formula,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Formula>,
}

/// Which copy: an instance ID, `self`, `picked`, `{ formula }` giving an ID, or (for `addItem`) the new
/// copy as an object.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum EntryRef {
    /// `self`, `picked` or an instance ID.
    Named(String),
    Formula {
        formula: Formula,
    },
    New(Box<NewEntry>),
}

/// An `addItem`'s new copy. `item`, `quantity`, `equipped` and state values are formulas; `id`,
/// `templates` and the picks' keys are literal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub item: Formula,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equipped: Option<Formula>,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub state: Keyed<Formula>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub templates: Vec<Id>,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub choices: Keyed<Vec<NewPick>>,
}

/// A pick of a new copy: `{ option, choices? }`, the option literal or `{ formula }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewPick {
    pub option: Computed<Literal>,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub choices: Keyed<Vec<NewPick>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EntryMap {
    formula: Option<Formula>,
    id: Option<String>,
    item: Option<Formula>,
    quantity: Option<Formula>,
    equipped: Option<Formula>,
    state: Option<Keyed<Formula>>,
    templates: Option<Vec<Id>>,
    choices: Option<Keyed<Vec<NewPick>>>,
}

impl<'de> Deserialize<'de> for EntryRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = match shape::deserialize::<D, String, EntryMap, Never>(
            deserializer,
            "an instance ID, `self`, `picked`, `{ formula }` or a new copy `{ item, … }`",
        )? {
            Shape::Scalar(name) => return Ok(EntryRef::Named(name)),
            Shape::Map(map) => map,
            Shape::List(never) => match never {},
        };
        let EntryMap {
            formula,
            id,
            item,
            quantity,
            equipped,
            state,
            templates,
            choices,
        } = map;
        if let Some(formula) = formula {
            let others = id.is_some()
                || item.is_some()
                || quantity.is_some()
                || equipped.is_some()
                || state.is_some()
                || templates.is_some()
                || choices.is_some();
            if others {
                return Err(D::Error::custom("`{ formula }` entry takes no other key"));
            }
            return Ok(EntryRef::Formula { formula });
        }
        let Some(item) = item else {
            return Err(D::Error::custom("missing field `item`"));
        };
        Ok(EntryRef::New(Box::new(NewEntry {
            id,
            item,
            quantity,
            equipped,
            state: state.unwrap_or_default(),
            templates: templates.unwrap_or_default(),
            choices: choices.unwrap_or_default(),
        })))
    }
}

/// A choice path (`change.schema.json#/$defs/choicePath`): `{ entry?, choice }`; `entry` left out for a
/// rules-level choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChoicePath {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<EntryRef>,
    pub choice: ChoicePathSegments,
}

/// A path's segments: choice keys alternating with picked options, written out or given by a formula.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ChoicePathSegments {
    Literal(Vec<String>),
    Formula(Formula),
}

impl<'de> Deserialize<'de> for ChoicePathSegments {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, Formula, Never, Vec<String>>(
            deserializer,
            "a list of path segments or a formula giving one",
        )? {
            Shape::Scalar(formula) => Ok(ChoicePathSegments::Formula(formula)),
            Shape::List(segments) => Ok(ChoicePathSegments::Literal(segments)),
            Shape::Map(never) => match never {},
        }
    }
}

impl ChangeType {
    pub fn name(self) -> &'static str {
        match self {
            ChangeType::Set => "set",
            ChangeType::Adjust => "adjust",
            ChangeType::AddItem => "addItem",
            ChangeType::RemoveItem => "removeItem",
            ChangeType::Equip => "equip",
            ChangeType::SetQuantity => "setQuantity",
            ChangeType::AdjustQuantity => "adjustQuantity",
            ChangeType::SetState => "setState",
            ChangeType::AdjustState => "adjustState",
            ChangeType::ApplyEffect => "applyEffect",
            ChangeType::RemoveEffect => "removeEffect",
            ChangeType::ToggleEffect => "toggleEffect",
            ChangeType::ApplyTemplate => "applyTemplate",
            ChangeType::RemoveTemplate => "removeTemplate",
            ChangeType::Choose => "choose",
            ChangeType::Unchoose => "unchoose",
            ChangeType::FinishCreation => "finishCreation",
            ChangeType::OfferFollowUp => "offerFollowUp",
            ChangeType::ClearFollowUp => "clearFollowUp",
            ChangeType::SetExtension => "setExtension",
            ChangeType::SetHomebrew => "setHomebrew",
        }
    }

    /// The optional keys a change of this type takes (catalogue §3.10); `when` and `forEach` go on any.
    fn keys(self) -> &'static [&'static str] {
        use ChangeType::*;
        match self {
            Set => &["when", "forEach", "field", "value"],
            Adjust => &[
                "when",
                "forEach",
                "field",
                "by",
                "tags",
                "split",
                "situational",
                "faces",
            ],
            AddItem => &["when", "forEach", "entry"],
            RemoveItem => &["when", "forEach", "entry", "copies", "limit"],
            Equip => &["when", "forEach", "entry", "copies", "limit", "equipped"],
            SetQuantity => &["when", "forEach", "entry", "copies", "limit", "value"],
            AdjustQuantity => &["when", "forEach", "entry", "copies", "limit", "by"],
            SetState => &[
                "when", "forEach", "entry", "copies", "limit", "applied", "pick", "picks", "path",
                "option", "key", "value",
            ],
            AdjustState => &[
                "when", "forEach", "entry", "copies", "limit", "applied", "pick", "picks", "path",
                "option", "key", "by",
            ],
            ApplyEffect => &["when", "forEach", "source", "id", "active", "state"],
            RemoveEffect => &["when", "forEach", "id", "applied"],
            ToggleEffect => &["when", "forEach", "id", "applied", "active"],
            ApplyTemplate | RemoveTemplate => &["when", "forEach", "entry", "template"],
            Choose | Unchoose => &["when", "forEach", "path", "option"],
            FinishCreation => &["when", "forEach"],
            OfferFollowUp => &["when", "forEach", "followUp", "params", "source"],
            ClearFollowUp => &["when", "forEach", "id"],
            // App-only; their keys are reconstructed (decisions.md, issue 12).
            SetExtension => &["when", "forEach", "namespace", "data"],
            SetHomebrew => &["when", "forEach", "homebrew"],
        }
    }
}

impl TryFrom<RawChange> for Change {
    type Error = String;

    fn try_from(raw: RawChange) -> Result<Change, String> {
        let change = raw.into_public();
        let kind = change.r#type.name();
        let what = format!("{} `{kind}` change", checked::article(kind));
        checked::misplaced(&change.written_keys(), change.r#type.keys(), &what)?;
        match (&change.entry, change.r#type) {
            (Some(EntryRef::New(_)), ChangeType::AddItem) | (None, _) => {}
            (Some(_), ChangeType::AddItem) => {
                return Err("an `addItem` entry is the new copy, `{ item, … }`".to_owned());
            }
            (Some(EntryRef::New(_)), _) => {
                return Err(format!(
                    "{what} names its entry by ID, `self`, `picked` or `{{ formula }}`"
                ));
            }
            _ => {}
        }
        Ok(change)
    }
}
