//! Rules documents (`rules/**/*.yaml`): what a pack declares besides content.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    Action, Choice, ContentTypeDecl, Effect, FamilyDecl, FieldDecl, FieldHint, FieldType, FollowUp,
    Formula, Id, Immunity, ItemFieldDecl, Keyed, Literal, OddsHint, Query, Recommend, Rounding,
    Tag, ViewFieldSet, ViewFields,
};

/// One rules document. A pack's rules files are merged in path order (maps key by key, lists
/// concatenated) into the release's single `rules` document.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RulesDocument {
    /// The declared tags; each declares the tags above it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<Tag>,
    /// Character fields, by ID, in ruleset field order.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub fields: Keyed<FieldDecl>,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub content_types: Keyed<ContentTypeDecl>,
    /// Template fields, by name (not qualified).
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub template_fields: Keyed<ItemFieldDecl>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
    /// Situational choices, by ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub situational: Keyed<SituationalDecl>,
    /// Result band sets, by ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub bands: Keyed<BandSet>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roll_tallies: Vec<String>,
    /// Shared actions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<Action>,
    /// Rules-level choices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<Choice>,
    /// Constraints, by ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub constraints: Keyed<Constraint>,
    /// Creation starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub creation: Vec<CreationStart>,
    /// Link slots, by ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub links: Keyed<LinkSlot>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<FollowUp>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub display_groups: Vec<DisplayGroup>,
    /// Content every character holds as copies (content-only queries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standard_copies: Vec<Query>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub immune_to: Vec<Immunity>,
    /// Always-on effects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<std::sync::Arc<Effect>>,
    /// Families by name: a bare name declares the pack's own family, a qualified one
    /// (`<pack>:<family>`) adds values to another pack's.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub families: Keyed<FamilyDecl>,
    /// Named sets of view fields, which a role's or a link slot's `fields` may name.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub view_fields: Keyed<ViewFieldSet>,
    /// Field hints; a later pack's hint with the same `id` replaces an earlier one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub field_hints: Vec<FieldHint>,
    /// Odds hints; a later pack's hint with the same `id` replaces an earlier one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub odds_hints: Vec<OddsHint>,
}

/// `settings`, merged key by key across packs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stacking: Option<StackingSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub competing: Option<CompetingSettings>,
    /// The game's rounding; `floor` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounding: Option<Rounding>,
    /// How a multiplied incoming amount rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_incoming: Option<Rounding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roll_modifiers: Option<RollModifierSettings>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StackingSettings {
    /// Stack key to policy (`source: highestOnly`).
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub keys: Keyed<StackPolicy>,
    /// The policy of keys not listed; `addAll` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<StackPolicy>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StackPolicy {
    AddAll,
    HighestOnly,
    LowestOnly,
    PlayerChooses,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompetingSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommend: Option<Recommend>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RollModifierSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advantage: Option<Advantage>,
}

/// How advantage and disadvantage sources combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Advantage {
    Cancel,
    Net,
    Stack,
}

/// A situational choice: a boolean, integer or enum the player sets when an action runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SituationalDecl {
    pub r#type: FieldType,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Literal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Literal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<Formula>,
    /// Roll effects and incoming-change effects that apply while it is selected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<std::sync::Arc<Effect>>,
}

/// A result band set: ordered bands, the first whose `when` holds is the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BandSet {
    /// Evaluated once with `roll` bound; bands read it as `roll.value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Formula>,
    pub bands: Vec<Band>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Band {
    pub id: String,
    pub when: Formula,
}

/// A rules constraint: false is the issue `constraint-failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Constraint {
    pub check: Formula,
    /// Check once per copy the query matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copies: Option<Query>,
    /// Evaluated into the issue's `data`.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub data: Keyed<Formula>,
}

/// A creation start: a rules action that creates a character.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreationStart {
    pub id: String,
    pub action: Id,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub params: Keyed<Literal>,
    /// Default `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random: Option<bool>,
}

/// A link slot: another character this one refers to (a crew).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LinkSlot {
    /// The pack the linked character uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack: Option<Id>,
    /// Its fields, or the name of a `viewFields` set (expanded at load).
    #[serde(default, skip_serializing_if = "ViewFields::is_empty")]
    pub fields: ViewFields,
}

/// A display group (display-hints.md): a heading of the sheet. A field group holds the fields
/// whose hints name it; a content group (`type`, `from: own`) lists the holder activations of its
/// type. Its name is the text `groups.<id>.name`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DisplayGroup {
    pub id: String,
    /// Its place on the sheet, lowest first; written order (load order) when equal or unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<GroupFrom>,
    /// A content group whose members' names also stand in the character's headline, beside its
    /// name (a species, a class and its level, a playbook).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<bool>,
    /// A headline content group's members may be added from a sheet: the state each member added
    /// beside those held is given, by state key, each value as an addItem's state value takes it
    /// (a formula, or a number or boolean as written): a second class's `level: 1` and
    /// `startingClass: false`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub add_state: std::collections::BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum GroupFrom {
    /// The holder's own activations of the type (features, inventory, picks).
    Own,
    /// The character's applied entries of the type (conditions applied by `applyEffect`): a page
    /// lists them with a way to remove each, and offers the type's items to apply.
    Applied,
}
