//! The ruleset: what `loadRuleset` makes of pack releases (engine-core, "loadRuleset"), and what every
//! other call works on. It is plain JSON (EC: "The ruleset is plain JSON").
//!
//! Everything is merged and resolved: every declaration is keyed by its qualified ID (`pack:id`), every
//! content ID, type name, field ID and action ID inside it is qualified, `extends` and `override` are
//! applied, and the content-only queries are answered. Formulas stay text ("Formulas may be kept as text
//! and parsed when first used"); a formula's names resolve in the pack that declared it, which each
//! declaration records (`pack`, and an item's `origins` for what another pack wrote).
//!
//! `docs/spec/formats.md` ("The ruleset") describes the JSON shape; `ocf-load` builds it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    Action, BandSet, Choice, ContentItem, ContentTypeDecl, CreationStart, DisplayGroup, Effect,
    FieldDecl, FieldHint, FollowUp, Formula, Id, Immunity, ItemFieldDecl, Keyed, LinkSlot, Literal,
    OddsHint, PackRelease, Query, Settings, SituationalDecl, Tag, Version, VersionRange,
};

/// The merged rules and resolved content of the packs loaded, in load order.
///
/// Keyed maps keep load order, then each pack's written order: fields are computed "in ruleset field
/// order", rules actions are listed "in definition order".
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ruleset {
    /// The packs, in load order, with the order their references resolve in.
    pub packs: Vec<LoadedPack>,
    /// Every declared tag and the tags above each, sorted, each once (the union of all packs' tags).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<Tag>,
    /// Character fields by qualified ID, in ruleset field order.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub fields: Keyed<Declared<FieldDecl>>,
    /// Content types by qualified name.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub content_types: Keyed<Declared<ContentTypeDecl>>,
    /// Template fields by bare name; the latest declaration.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub template_fields: Keyed<Declared<ItemFieldDecl>>,
    /// The settings merged key by key, later packs winning.
    #[serde(default)]
    pub settings: Settings,
    /// Situational choices by qualified ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub situational: Keyed<Declared<SituationalDecl>>,
    /// Result band sets by qualified ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub bands: Keyed<Declared<BandSet>>,
    /// Roll tally names by pack: a tally is visible where its pack is.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub roll_tallies: Keyed<Vec<String>>,
    /// Rules (shared) actions by qualified ID, in definition order.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub actions: Keyed<Declared<Action>>,
    /// Rules-level choices by qualified ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub choices: Keyed<Declared<Choice>>,
    /// Constraints by qualified ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub constraints: Keyed<Declared<crate::Constraint>>,
    /// Creation starts, concatenated in load order; a later start with the same `id` replaces the
    /// earlier in its place. `action` is qualified and `random` is always written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub creation: Vec<Declared<CreationStart>>,
    /// Link slots by qualified ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub links: Keyed<Declared<LinkSlot>>,
    /// Rules follow-ups by qualified ID; a `create` offer's `link` is qualified and its `start` is
    /// `<pack>:<start id>` of the ruleset's start.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub follow_ups: Keyed<Declared<FollowUp>>,
    /// Display groups by ID; a later pack's group replaces an earlier one with the same ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub display_groups: Keyed<Declared<DisplayGroup>>,
    /// Field hints by ID; a later pack's hint replaces an earlier one with the same ID, in its place.
    /// `field` is qualified.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub field_hints: Keyed<Declared<FieldHint>>,
    /// Odds hints by ID; a later pack's hint replaces an earlier one with the same ID, in its place.
    /// `actions` and `field` are qualified.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub odds_hints: Keyed<Declared<OddsHint>>,
    /// Families by qualified name (`<pack>:<family>`), each with its values in load order: the
    /// declaring pack's, then each loaded pack's additions.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub families: Keyed<Family>,
    /// The rules' standard copies queries, in load order then declaration order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standard_copies: Vec<Declared<Query>>,
    /// The rules' immunities, in load order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub immune_to: Vec<Declared<Immunity>>,
    /// The rules' always-on effects, in load order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<Declared<std::sync::Arc<Effect>>>,
    /// Every content item by qualified ID, in load order then written order; hidden ones included.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub content: Keyed<ContentEntry>,
    /// The answers of the content-only queries, one per distinct query.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<QueryResult>,
    /// Settings overridden by a later pack, and properties two packs override on one item.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<Conflict>,
    /// The packs' texts merged in load order (i18n.md), with each pack's default locale.
    #[serde(default, skip_serializing_if = "crate::text::TextTable::is_empty")]
    pub texts: crate::text::TextTable,
    /// The releases the ruleset was loaded from, in load order, so homebrew can be loaded on top.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<PackRelease>,
    /// What the engine derived from this ruleset once (parsed formulas, resolved field names),
    /// shared by its clones; never written. Reset it after changing a ruleset already used.
    #[serde(skip)]
    #[schemars(skip)]
    pub derived: crate::derived::Derived,
    /// The formulas the load parsed (and checked), by text, for an engine to take up instead of
    /// parsing them again; never written. A parse is a function of the text alone, so the table
    /// stays true whatever is changed in the ruleset after.
    #[serde(skip)]
    #[schemars(skip)]
    pub parsed: crate::derived::Derived,
}

/// A loaded pack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoadedPack {
    pub id: String,
    pub version: Version,
    pub spec_version: Version,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub dependencies: Keyed<VersionRange>,
    /// Where the pack's references resolve, in order: the pack itself, then its dependencies nearest
    /// first (for `homebrew`: each pinned pack and its dependencies, in pin order).
    pub scope: Vec<String>,
}

/// A declaration and the pack that declared it (its formulas' names resolve there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Declared_{T}")]
pub struct Declared<T> {
    /// The declaring pack. Serialised as `declaredIn`, since a declaration may have its own `pack`
    /// (a link slot's linked pack).
    #[serde(rename = "declaredIn")]
    pub pack: String,
    /// For each declaration inside this one that has `members`, by its JSON pointer relative to this
    /// one (`` for itself, `/fields/<name>`, `/state/<key>`, `/actions/<i>/params/<name>`): the
    /// ruleset's declared tags, with the tags above each, that `members` takes, sorted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tag_options: BTreeMap<String, Vec<Tag>>,
    #[serde(flatten)]
    pub decl: T,
}

impl<T> Declared<T> {
    pub fn new(pack: impl Into<String>, decl: T) -> Declared<T> {
        Declared {
            pack: pack.into(),
            tag_options: BTreeMap::new(),
            decl,
        }
    }
}

/// A loaded family: its values for formulas, the declaring pack's first, then each loaded pack's
/// additions in load order (EC, step 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Family {
    /// The pack that declared the family.
    pub declared_in: String,
    /// The values by ID, in load order.
    pub values: Keyed<FamilyMember>,
}

/// One value of a loaded family, with the pack that added it: `fieldOf` reads its fields there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FamilyMember {
    pub declared_in: String,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub fields: Keyed<Literal>,
}

/// A resolved content item: `extends` and every `override` applied, IDs qualified.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContentEntry {
    /// The pack that declared the item (`declaredIn`, as for [`Declared`]).
    #[serde(rename = "declaredIn")]
    pub pack: String,
    /// Hidden by some pack's `hides`: kept, but queries skip it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
    /// Top-level properties written by another pack than `pack` (a parent's through `extends`, an
    /// `override`'s), by property name: their formulas resolve names in that pack.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub origins: BTreeMap<String, String>,
    /// As [`Declared::tag_options`], for the item's state keys (`/state/<key>`) and action params.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tag_options: BTreeMap<String, Vec<Tag>>,
    /// The item; `id`, `type`, `extends` and every reference inside are qualified, `override` is gone.
    #[serde(flatten)]
    pub item: ContentItem,
}

impl ContentEntry {
    /// The qualified content type name.
    pub fn type_name(&self) -> Option<&str> {
        self.item.r#type.as_ref().map(Id::as_str)
    }

    /// The pack whose names the formulas of `property` (a top-level key, `effects`) resolve in.
    pub fn pack_of(&self, property: &str) -> &str {
        self.origins.get(property).unwrap_or(&self.pack)
    }
}

/// The answer of a content-only query: the non-hidden items of `type` whose `where` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueryResult {
    /// The qualified content type.
    pub r#type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#where: Option<Formula>,
    /// Qualified IDs, sorted.
    pub items: Vec<String>,
}

/// Something a later pack changed that an earlier one had set (EC: "the override is reported in
/// `conflicts`"; "the pair is reported in `conflicts`").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, tag = "kind")]
pub enum Conflict {
    /// A setting (a dotted key under `settings`: `rounding`, `stacking.keys.source`) set by `packs[0]`
    /// and overridden by `packs[1]`.
    Setting { key: String, packs: [String; 2] },
    /// A property of `item` overridden by `packs[0]`, then by `packs[1]`, which wins.
    Override {
        item: String,
        property: String,
        packs: [String; 2],
    },
}

/// What a reference names, for [`Ruleset::resolve`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespace {
    Field,
    ContentType,
    Content,
    Action,
    Situational,
    Bands,
    Choice,
    Constraint,
    Link,
}

impl Ruleset {
    /// The locale a front end words this ruleset in when none is asked for: the first pack's
    /// default locale, else the format's default.
    pub fn default_locale(&self) -> String {
        self.packs
            .first()
            .and_then(|p| self.texts.default_locales.get(&p.id))
            .cloned()
            .unwrap_or_else(|| crate::text::DEFAULT_LOCALE.to_owned())
    }

    pub fn pack(&self, id: &str) -> Option<&LoadedPack> {
        self.packs.iter().find(|p| p.id == id)
    }

    pub fn field(&self, qualified: &str) -> Option<&Declared<FieldDecl>> {
        self.fields.get(qualified)
    }

    pub fn content_type(&self, qualified: &str) -> Option<&Declared<ContentTypeDecl>> {
        self.content_types.get(qualified)
    }

    pub fn item(&self, qualified: &str) -> Option<&ContentEntry> {
        self.content.get(qualified)
    }

    pub fn action(&self, qualified: &str) -> Option<&Declared<Action>> {
        self.actions.get(qualified)
    }

    /// The stored answer of a content-only query (`type` qualified, `where` as written).
    pub fn query_result(&self, r#type: &str, r#where: Option<&str>) -> Option<&[String]> {
        self.queries
            .iter()
            .find(|q| q.r#type == r#type && q.r#where.as_ref().map(Formula::as_str) == r#where)
            .map(|q| q.items.as_slice())
    }

    /// Resolves `reference` as written in `pack`: a qualified ID must name a declaration of a pack in
    /// `pack`'s scope; a local one is tried in the pack, then its dependencies, nearest first.
    pub fn resolve(&self, pack: &str, reference: &str, namespace: Namespace) -> Option<String> {
        let scope = &self.pack(pack)?.scope;
        let exists = |qualified: &str| match namespace {
            Namespace::Field => self.fields.get(qualified).is_some(),
            Namespace::ContentType => self.content_types.get(qualified).is_some(),
            Namespace::Content => self.content.get(qualified).is_some(),
            Namespace::Action => self.actions.get(qualified).is_some(),
            Namespace::Situational => self.situational.get(qualified).is_some(),
            Namespace::Bands => self.bands.get(qualified).is_some(),
            Namespace::Choice => self.choices.get(qualified).is_some(),
            Namespace::Constraint => self.constraints.get(qualified).is_some(),
            Namespace::Link => self.links.get(qualified).is_some(),
        };
        if let Some((owner, _)) = reference.split_once(':') {
            return (scope.iter().any(|p| p == owner) && exists(reference))
                .then(|| reference.to_owned());
        }
        scope
            .iter()
            .map(|p| format!("{p}:{reference}"))
            .find(|q| exists(q))
    }

    /// The family `name` as a formula of `pack` names it: a qualified name (`<pack>:<family>`) of a
    /// pack in `pack`'s scope, or a bare name tried in the pack, then its dependencies, nearest first.
    /// Gives the qualified name and the family.
    pub fn family(&self, pack: &str, name: &str) -> Option<(&str, &Family)> {
        let scope = &self.pack(pack)?.scope;
        let qualified = match name.split_once(':') {
            Some((owner, _)) => scope.iter().any(|p| p == owner).then(|| name.to_owned())?,
            None => scope
                .iter()
                .map(|p| format!("{p}:{name}"))
                .find(|q| self.families.get(q).is_some())?,
        };
        self.families
            .0
            .get_key_value(&qualified)
            .map(|(k, f)| (k.as_str(), f))
    }

    /// `fieldOf(family, value, field)` in a formula of `pack`: the field of the family's value as
    /// the pack that added the value wrote it. `None` when the family, value or field is absent.
    pub fn family_field(
        &self,
        pack: &str,
        family: &str,
        value: &str,
        field: &str,
    ) -> Option<&Literal> {
        self.family(pack, family)?
            .1
            .values
            .get(value)?
            .fields
            .get(field)
    }

    /// The declared tags, with the tags above each, that `members` takes (a member takes itself and
    /// every tag below it), sorted.
    pub fn tag_options(&self, members: &[Tag]) -> Vec<Tag> {
        self.tags
            .iter()
            .filter(|tag| {
                members
                    .iter()
                    .any(|m| tag_matches(m.as_str(), tag.as_str()))
            })
            .cloned()
            .collect()
    }
}

/// Whether `target` matches `tag`: the same tag or one below it (`damage` matches `damage.fire`).
pub fn tag_matches(target: &str, tag: &str) -> bool {
    tag == target
        || tag
            .strip_prefix(target)
            .is_some_and(|rest| rest.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ruleset is plain JSON: what an engine writes, another reads back unchanged, flattened
    /// declarations included.
    #[test]
    fn round_trips_through_json() {
        let json = serde_json::json!({
            "packs": [{ "id": "core", "version": "1.0.0", "specVersion": "1.0.0", "scope": ["core"] }],
            "tags": ["damage", "damage.fire"],
            "fields": {
                "core:hp": { "declaredIn": "core", "type": "integer", "default": 3 },
                "core:resist": {
                    "declaredIn": "core", "tagOptions": { "": ["damage", "damage.fire"] },
                    "type": "set", "members": ["damage"]
                }
            },
            "settings": { "rounding": "ceil" },
            "content": {
                "core:a": { "declaredIn": "core", "hidden": true, "origins": { "tags": "other" },
                            "id": "core:a", "type": "core:feat", "tags": ["damage"] }
            },
            "queries": [{ "type": "core:feat", "items": ["core:a"] }],
            "conflicts": [{ "kind": "setting", "key": "rounding", "packs": ["core", "other"] }]
        });
        let ruleset: Ruleset = serde_json::from_value(json.clone()).unwrap();
        assert!(ruleset.content.get("core:a").unwrap().hidden);
        assert_eq!(ruleset.item("core:a").unwrap().pack_of("tags"), "other");
        assert_eq!(
            ruleset.query_result("core:feat", None),
            Some(&["core:a".to_owned()][..])
        );
        assert_eq!(
            ruleset.resolve("core", "hp", Namespace::Field).as_deref(),
            Some("core:hp")
        );
        assert_eq!(ruleset.resolve("core", "other:hp", Namespace::Field), None);
        assert_eq!(
            ruleset.tag_options(&[Tag::from("damage.fire")]),
            vec![Tag::from("damage.fire")]
        );
        assert_eq!(serde_json::to_value(&ruleset).unwrap(), json);
    }

    #[test]
    fn tags_match_themselves_and_below() {
        assert!(tag_matches("damage", "damage.fire"));
        assert!(tag_matches("damage", "damage"));
        assert!(!tag_matches("damage.fire", "damage"));
        assert!(!tag_matches("dam", "damage"));
    }
}
