//! Packs: the source folder's `pack.yaml` manifest, and a pack release (what the build makes of a
//! source folder, one JSON document).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{ContentItem, Id, Keyed, RulesDocument, Version, VersionRange};

/// `pack.yaml`: who the pack is and what it needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PackManifest {
    /// The pack ID (`5e-srd-5.1`); qualifies every ID the pack declares.
    pub id: Id,
    pub version: Version,
    /// The spec version the pack is written for.
    pub spec_version: Version,
    /// Pack ID to the version range it accepts, nearest first.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub dependencies: Keyed<VersionRange>,
    /// The locale the pack's texts are written in first (i18n.md); `en` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_locale: Option<String>,
}

/// A pack release: the manifest, the rules files merged in path order, and every content item in path
/// order. A character's `homebrew` is loaded as one of these (ID `homebrew`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PackRelease {
    pub id: Id,
    pub version: Version,
    pub spec_version: Version,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub dependencies: Keyed<VersionRange>,
    #[serde(default)]
    pub rules: RulesDocument,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ContentItem>,
    /// The manifest's `defaultLocale`; `en` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_locale: Option<String>,
    /// The translation files (`i18n/`), by locale, each key's message (i18n.md).
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub texts: crate::text::PackTexts,
}
