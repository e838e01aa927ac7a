//! A character's homebrew, loaded on top of a ruleset (engine-core, "A character's homebrew").

use ocf_model::{Character, Homebrew, Id, Keyed, PackRelease, Ruleset, VersionRange};
use serde_json::Value;

use crate::error::LoadErrorRecord;
use crate::ruleset::{LoadOptions, load_ruleset};

/// Homebrew's own safety limits (PROVISIONAL, as all of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HomebrewLimits {
    /// `maxHomebrewItems`: content items plus rules-level definitions.
    pub max_items: usize,
    /// `maxHomebrewFormulas`: formulas written as text.
    pub max_formulas: usize,
}

impl Default for HomebrewLimits {
    fn default() -> HomebrewLimits {
        HomebrewLimits {
            max_items: 200,
            max_formulas: 1000,
        }
    }
}

/// Loads `character`'s homebrew on top of `ruleset`; the ruleset as given when it has none. Every
/// failure is a `homebrew-error` with `cause`, `detail` and a `path` into the character.
pub fn load_homebrew(
    ruleset: &Ruleset,
    character: &Character,
) -> Result<Ruleset, Vec<LoadErrorRecord>> {
    load_homebrew_with(
        ruleset,
        character,
        &HomebrewLimits::default(),
        &LoadOptions::default(),
    )
}

#[tracing::instrument(name = "homebrew", level = "info", skip_all, fields(character = %character.id))]
pub fn load_homebrew_with(
    ruleset: &Ruleset,
    character: &Character,
    limits: &HomebrewLimits,
    options: &LoadOptions,
) -> Result<Ruleset, Vec<LoadErrorRecord>> {
    let Some(homebrew) = &character.homebrew else {
        return Ok(ruleset.clone());
    };
    let release = homebrew_release(ruleset, character, homebrew);
    let mut errors = not_allowed(homebrew);
    let items = homebrew.content.len() + homebrew.rules.as_ref().map_or(0, rules_definitions);
    if items > limits.max_items {
        errors.push(
            LoadErrorRecord::new(
                "safety-limit-exceeded",
                format!("homebrew has {items} items and definitions, more than maxHomebrewItems"),
            )
            .with("limit", "maxHomebrewItems")
            .with("maxHomebrewItems", limits.max_items),
        );
    }
    let formulas = crate::formulas::collect(&release).len();
    if formulas > limits.max_formulas {
        errors.push(
            LoadErrorRecord::new(
                "safety-limit-exceeded",
                format!("homebrew has {formulas} formulas, more than maxHomebrewFormulas"),
            )
            .with("limit", "maxHomebrewFormulas")
            .with("maxHomebrewFormulas", limits.max_formulas),
        );
    }
    if !errors.is_empty() {
        return Err(errors.into_iter().map(wrap).collect());
    }
    let mut releases = ruleset.sources.clone();
    releases.push(release);
    load_ruleset(&releases, options).map_err(|errors| errors.into_iter().map(wrap).collect())
}

/// The homebrew section as the pack `homebrew`: the character's spec version, every pinned pack the
/// ruleset has as a dependency, in pin order.
pub fn homebrew_release(
    ruleset: &Ruleset,
    character: &Character,
    homebrew: &Homebrew,
) -> PackRelease {
    let mut dependencies = Keyed::default();
    for pin in &character.packs {
        if let Some(pack) = ruleset.pack(pin.id.as_str()) {
            dependencies.0.insert(
                pack.id.clone(),
                VersionRange(pack.version.as_str().to_owned()),
            );
        }
    }
    PackRelease {
        id: Id("homebrew".into()),
        version: ocf_model::Version("0.0.0".into()),
        spec_version: character.spec_version.clone(),
        dependencies,
        rules: homebrew.rules.clone().unwrap_or_default(),
        content: homebrew.content.clone(),
        default_locale: None,
        texts: homebrew.texts.clone(),
    }
}

fn rules_definitions(rules: &ocf_model::RulesDocument) -> usize {
    rules.fields.len()
        + rules.content_types.len()
        + rules.template_fields.len()
        + rules.situational.len()
        + rules.bands.len()
        + rules.actions.len()
        + rules.choices.len()
        + rules.constraints.len()
        + rules.creation.len()
        + rules.links.len()
        + rules.follow_ups.len()
        + rules.display_groups.len()
        + rules.standard_copies.len()
        + rules.immune_to.len()
        + rules.effects.len()
}

/// Step 1: no `override`, no `settings`.
fn not_allowed(homebrew: &Homebrew) -> Vec<LoadErrorRecord> {
    let mut errors = Vec::new();
    for (i, item) in homebrew.content.iter().enumerate() {
        if item.r#override.is_some() {
            errors.push(
                LoadErrorRecord::new("homebrew-not-allowed", "homebrew may not override content")
                    .at(format!("/packs/homebrew/content/{i}"))
                    .with("property", "override"),
            );
        }
    }
    if homebrew
        .rules
        .as_ref()
        .is_some_and(|r| r.settings.is_some())
    {
        errors.push(
            LoadErrorRecord::new("homebrew-not-allowed", "homebrew may not change settings")
                .at("/packs/homebrew/rules")
                .with("property", "settings"),
        );
    }
    errors
}

/// A load error as `homebrew-error`: the load code as `cause`, its data as `detail`, its path moved
/// into the character (`/homebrew/content/0`, `/homebrew/rules`, else `/homebrew`).
fn wrap(error: LoadErrorRecord) -> LoadErrorRecord {
    let path = match error
        .path
        .as_deref()
        .and_then(|p| p.strip_prefix("/packs/homebrew"))
    {
        Some(rest) => format!("/homebrew{rest}"),
        None => "/homebrew".to_owned(),
    };
    LoadErrorRecord::new("homebrew-error", format!("homebrew: {}", error.message))
        .at(path)
        .with("cause", error.code.as_str())
        .with("detail", Value::Object(error.data))
}

/// A layered ruleset kept for one homebrew and set of pins (EC: "Engines MAY cache the layered
/// ruleset by the homebrew's content and the pins; the result must be the same as loading it fresh").
#[derive(Debug, Default, Clone)]
pub struct HomebrewCache {
    entry: Option<(CacheKey, Result<Ruleset, Vec<LoadErrorRecord>>)>,
}

#[derive(Debug, Clone, PartialEq)]
struct CacheKey {
    homebrew: Option<Homebrew>,
    pins: Vec<ocf_model::PackPin>,
    spec_version: ocf_model::Version,
    base: Vec<(String, ocf_model::Version)>,
}

impl HomebrewCache {
    pub fn new() -> HomebrewCache {
        HomebrewCache::default()
    }

    /// As [`load_homebrew`], reusing the last result when the homebrew, pins and base packs match.
    pub fn load(
        &mut self,
        ruleset: &Ruleset,
        character: &Character,
    ) -> Result<Ruleset, Vec<LoadErrorRecord>> {
        let key = CacheKey {
            homebrew: character.homebrew.clone(),
            pins: character.packs.clone(),
            spec_version: character.spec_version.clone(),
            base: ruleset
                .packs
                .iter()
                .map(|p| (p.id.clone(), p.version.clone()))
                .collect(),
        };
        if let Some((cached, result)) = &self.entry
            && *cached == key
        {
            return result.clone();
        }
        let result = load_homebrew(ruleset, character);
        self.entry = Some((key, result.clone()));
        result
    }
}
