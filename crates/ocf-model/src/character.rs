//! The character file: what a player's character holds, referencing the packs it is built from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{ContentItem, Id, Keyed, Literal, RulesDocument, Version};

/// A character file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Character {
    /// `character.id`; other characters' links and participant views name it.
    pub id: String,
    /// The spec version the file is written for; also the homebrew pack's.
    pub spec_version: Version,
    /// The pack releases the character is built from, in load order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packs: Vec<PackPin>,
    /// True while the character is being created; `finishCreation` ends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creating: Option<bool>,
    /// Saved values of input fields, by field ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub values: Keyed<Literal>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<CopyEntry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inventory: Vec<CopyEntry>,
    /// Content applied to the character: spells cast on it, conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied: Vec<AppliedEntry>,
    /// Picks of rules-level choices, by choice ID (qualified).
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub choices: Picks,
    /// Picks among competing options, as computeSheet's `competing` input takes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub competing: Vec<String>,
    /// Link slot ID to the linked character's ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub links: Keyed<String>,
    /// Ephemeral follow-up offers `offerFollowUp` stored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<StoredOffer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homebrew: Option<Homebrew>,
    /// App data by namespace; engines keep it and never read it.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub extensions: Keyed<serde_json::Value>,
}

/// A pinned pack release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PackPin {
    pub id: Id,
    pub version: Version,
}

/// A copy: an entry in `features` or `inventory`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CopyEntry {
    /// The instance ID, unique in the file.
    pub id: String,
    /// The content ID.
    pub item: Id,
    /// Default `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equipped: Option<bool>,
    /// Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<u64>,
    /// Saved state values by key.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub state: Keyed<Literal>,
    /// Saved templates, in order (kept ones are not saved).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub templates: Vec<Id>,
    /// The picks tree of the copy's activation.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub choices: Picks,
}

impl CopyEntry {
    /// A copy of `item` with nothing saved but its ID: unequipped, one of it, no state, templates
    /// or picks (as the engines write a standard copy).
    pub fn new(id: impl Into<String>, item: impl Into<Id>) -> CopyEntry {
        CopyEntry {
            id: id.into(),
            item: item.into(),
            equipped: None,
            quantity: None,
            state: Default::default(),
            templates: Vec::new(),
            choices: Default::default(),
        }
    }
}

/// A picks tree: choice key (`<id>`, `<id>-<n>` for a slot, `<key>/<id>` for a template's or granted
/// content's choice) to the picks, in order.
pub type Picks = Keyed<Vec<PickEntry>>;

/// One pick: the option (a content ID, an inline option's ID, or a value), and the picks of the choices
/// the picked option brings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PickEntry {
    pub option: Literal,
    /// Saved state values by key, declared by the picked content (a `setState` with `pick`
    /// writes them; decisions.md, issue 12).
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub state: Keyed<Literal>,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub choices: Picks,
}

/// An entry of `applied`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppliedEntry {
    pub id: String,
    /// The applied content's ID.
    pub source: Id,
    /// Default `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<bool>,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub state: Keyed<Literal>,
}

/// A stored (ephemeral) follow-up offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StoredOffer {
    /// What `clearFollowUp` names.
    pub id: String,
    /// The qualified follow-up.
    pub follow_up: Id,
    /// The content that offered it, as computeSheet names sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Id>,
    /// The evaluated parameters.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub params: Keyed<Literal>,
}

/// The character's own homebrew: loaded as the pack `homebrew`. No `override`, no `settings`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Homebrew {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ContentItem>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<RulesDocument>,
    /// Texts for what the homebrew declares or renames (i18n.md), by locale then key, as a
    /// pack's translation files give them; merged last.
    #[serde(default, skip_serializing_if = "crate::Keyed::is_empty")]
    pub texts: crate::text::PackTexts,
}
