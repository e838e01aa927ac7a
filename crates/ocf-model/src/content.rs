//! Content: content type declarations and content items (`content/**/*.yaml`).

use schemars::JsonSchema;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::shape::{self, Never, Shape};
use crate::written::written_struct;
use crate::{
    Action, Choice, ComputedDecl, Effect, FollowUp, Formula, Id, ItemFieldDecl, Keyed, Literal,
    Scope, StateDecl, Tag,
};

/// A content type (`contentTypes`, keyed by name).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContentTypeDecl {
    /// Item fields its items set.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub fields: Keyed<ItemFieldDecl>,
    /// Per-copy state keys.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub state: Keyed<StateDecl>,
    /// Per-copy computed values.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub computed: Keyed<ComputedDecl>,
    /// Apply before each item's own, on every item of the type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<std::sync::Arc<Effect>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grants: Vec<Grant>,
    /// Every item of the type gets them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<Action>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copies: Option<CopyLimits>,
    /// A state key whose value names each copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_from: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<FollowUp>,
    /// Unsaved standard copies of a carried type go to `inventory`, of others to `features`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried: Option<bool>,
}

/// `copies: { max, perItem }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CopyLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_item: Option<u32>,
}

// Its lists remember being written empty, which `extends` and `override` need (see `crate::written`).
written_struct! {
/// A content item: a class, a feature, a spell, a weapon, a condition, a template.
#[derive(Debug, Clone, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContentItem read as RawContentItem {
    /// Required, except on an `override` (which names the item it changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Id>,
    /// The content type; inherited through `extends` or `override`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<Id>,
    /// The parent item this one starts from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extends: Option<Id>,
    /// The item this one changes in place (not in homebrew).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#override: Option<Id>,
    /// A template: applied to copies, never owned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<Tag>,
    /// A template's tags taken off the copy's item before its own are added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_tags: Vec<Tag>,
    /// Item field values by name; a template's `null` removes the field.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub fields: Keyed<Literal>,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub state: Keyed<StateDecl>,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub computed: Keyed<ComputedDecl>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<std::sync::Arc<Effect>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grants: Vec<Grant>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<Choice>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<Action>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prerequisites: Vec<Prerequisite>,
    /// Items held as copies while this one is active (content-only queries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standard_copies: Vec<Query>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub immune_to: Vec<Immunity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keeps_templates: Vec<KeptTemplate>,
    /// Items this one hides: they stay, marked hidden, and queries skip them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hides: Vec<Id>,
    /// A state key naming the copy; replaces the type's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_from: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<FollowUp>,
    /// Content-type effects this item drops, by effect ID or index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suppress: Vec<EffectKey>,
    /// May be picked again in the same `unique` group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeatable: Option<bool>,
}
}

/// An effect named by its `id` or its index in the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum EffectKey {
    Index(u32),
    Id(String),
}

impl<'de> Deserialize<'de> for EffectKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;

        impl Visitor<'_> for KeyVisitor {
            type Value = EffectKey;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an effect ID or index")
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<EffectKey, E> {
                u32::try_from(v)
                    .map(EffectKey::Index)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<EffectKey, E> {
                u32::try_from(v)
                    .map(EffectKey::Index)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<EffectKey, E> {
                Ok(EffectKey::Id(v.to_owned()))
            }
        }

        deserializer.deserialize_any(KeyVisitor)
    }
}

/// Content an item activates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Grant {
    pub item: Id,
    /// An activation condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waive_prerequisites: Option<bool>,
}

/// A prerequisite: false is the issue `prerequisite-not-met` (ID `<owner>/<id>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Prerequisite {
    pub id: String,
    pub check: Formula,
}

/// A query over content or copies of a type: `{ type, where? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Query {
    pub r#type: Id,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#where: Option<Formula>,
}

/// Applied content the character can't be affected by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Immunity {
    /// Used in issue IDs (`<owner>/<id>`).
    pub id: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<Id>,
    /// `item` the candidate's source, `entry` the candidate entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<Query>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Formula>,
    /// `holder` (default) or `applied`; the rules' immunities have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
}

/// `keepsTemplates`: while `when` holds, `template` is on every copy `copies` matches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KeptTemplate {
    pub template: Id,
    pub copies: Query,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Formula>,
}

/// A content source file: one item, or a list of items.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ContentFile {
    One(Box<ContentItem>),
    Many(Vec<ContentItem>),
}

impl ContentFile {
    pub fn into_items(self) -> Vec<ContentItem> {
        match self {
            ContentFile::One(item) => vec![*item],
            ContentFile::Many(items) => items,
        }
    }
}

impl<'de> Deserialize<'de> for ContentFile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, Never, ContentItem, Vec<ContentItem>>(
            deserializer,
            "a content item or a list of content items",
        )? {
            Shape::Map(item) => Ok(ContentFile::One(Box::new(item))),
            Shape::List(items) => Ok(ContentFile::Many(items)),
            Shape::Scalar(never) => match never {},
        }
    }
}
