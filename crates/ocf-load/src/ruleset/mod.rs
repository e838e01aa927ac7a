//! `loadRuleset` (engine-core, "loadRuleset"): pack releases in load order to a [`Ruleset`], or errors.
//!
//! The five steps of the chapter, one module each: [`packs`] (check the packs), [`merge`] (merge the
//! rules), [`resolve`] (resolve content), [`queries`] (content-only queries) and the formula check
//! ([`crate::formulas`]). Each step reports all its errors; a step runs only when the earlier ones
//! succeeded, since what it would report depends on them (an unresolved type, a missing pack).

mod action_checks;
mod effect_checks;
mod merge;
mod packs;
mod qualify;
mod queries;
mod resolve;
mod scope;

use ocf_model::{ContentItem, Namespace, PackRelease, Ruleset};

use crate::error::LoadErrorRecord;

pub use scope::{scope_of, visible_fields};

/// The engine's side of loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadOptions {
    /// The newest spec version the engine implements (`spec-version-unsupported` past it).
    pub spec_version: String,
    /// `maxExtendsDepth`: the longest `extends` chain (PROVISIONAL, as all safety limits).
    pub max_extends_depth: usize,
}

/// The spec version this engine implements.
pub const SPEC_VERSION: &str = "1.0.0";

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            spec_version: SPEC_VERSION.to_owned(),
            max_extends_depth: 16,
        }
    }
}

/// Loads `releases` (in load order, later packs win) into a ruleset.
#[tracing::instrument(name = "loadRuleset", level = "info", skip_all, fields(packs = releases.len()))]
pub fn load_ruleset(
    releases: &[PackRelease],
    options: &LoadOptions,
) -> Result<Ruleset, Vec<LoadErrorRecord>> {
    // Steps 4 and 5 parse formulas, and so does a build that loads what it built: one parse each.
    // The ruleset keeps what they parsed: an engine takes the parses up instead of parsing the
    // same texts again (once per ruleset).
    crate::parsed::scope(|| {
        let mut ruleset = load(releases, options)?;
        let mut kept = crate::parsed::kept();
        kept.plan_bands(&ruleset);
        ruleset.parsed = ocf_model::Derived::with(kept);
        Ok(ruleset)
    })
}

fn load(releases: &[PackRelease], options: &LoadOptions) -> Result<Ruleset, Vec<LoadErrorRecord>> {
    let packs = packs::check(releases, options)?;
    // Step 1, "Families": every pack is expanded with the families it sees; a pack already
    // expanded (a built release) has nothing left to expand and is used as given.
    let (families, errors) = crate::families::index(releases);
    done(crate::families::records(errors))?;
    let sources = releases;
    let releases = &*crate::families::expand_all(releases, &families)?;
    let mut ruleset = Ruleset {
        packs,
        families: families.families,
        sources: sources.to_vec(),
        ..Ruleset::default()
    };
    merge::merge(&mut ruleset, releases)?;
    resolve::resolve(&mut ruleset, releases, options)?;
    effect_checks::check(&ruleset, releases)?;
    action_checks::check(releases)?;
    queries::resolve(&mut ruleset)?;
    check_formulas(&ruleset, releases)?;
    Ok(ruleset)
}

/// Step 5: every formula of every pack, names resolved in its pack and its dependencies.
fn check_formulas(ruleset: &Ruleset, releases: &[PackRelease]) -> Result<(), Vec<LoadErrorRecord>> {
    let mut errors = Vec::new();
    for release in releases {
        let pack = release.id.as_str();
        let fields = visible_fields(ruleset, pack);
        // An item's fields are typed by its resolved content type (inherited through `extends`,
        // an override's target's), else by the template fields.
        let item_field_type = |item: &ContentItem, name: &str| {
            let target = match (&item.r#override, &item.id) {
                (Some(target), _) => ruleset.resolve(pack, target.as_str(), Namespace::Content)?,
                (None, Some(id)) => format!("{pack}:{id}"),
                (None, None) => return None,
            };
            let ty = ruleset.item(&target)?.type_name()?;
            let declared = ruleset
                .content_type(ty)
                .and_then(|t| t.decl.fields.get(name))
                .or_else(|| ruleset.template_fields.get(name).map(|t| &t.decl))?;
            Some(declared.r#type)
        };
        let field_is_input = |name: &str| {
            let qualified = ruleset.resolve(pack, name, Namespace::Field)?;
            Some(ruleset.field(&qualified)?.decl.input == Some(true))
        };
        errors.extend(crate::formulas::check_pack_with(
            release,
            &fields,
            &item_field_type,
            &field_is_input,
        ));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// `Ok` when `errors` is empty.
fn done(errors: Vec<LoadErrorRecord>) -> Result<(), Vec<LoadErrorRecord>> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}
