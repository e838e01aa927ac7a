//! `ocf check` and `ocf load` agree: a release the build would make is loaded, with the given
//! dependencies before it, and every load error about the pack becomes a problem at the place in
//! the folder it is about. The build's own checks say most of these first and more precisely (they
//! know the pointer); this step catches whatever loadRuleset checks that they do not, so a folder
//! that passes `ocf check` also loads.
//!
//! A load error names its document only (`/packs/<pack>/content/<i>`, `/packs/<pack>/rules`): an
//! item's error is placed at the item; a rules error at the declaration its data names (`field`,
//! `link`, `followUp`, `id`, ...), found in the merged rules and traced back to its file, else at
//! the start of the first rules file.

use ocf_model::{PackRelease, Ruleset};
use serde_json::Value;

use super::content::Placed;
use super::locations::{Locations, escape};
use super::merge::Origins;
use super::problem::Problem;
use crate::error::LoadErrorRecord;
use crate::ruleset::{LoadOptions, load_ruleset};

/// Where the release's parts were read.
pub struct Sources<'a> {
    pub origins: &'a Origins,
    /// The rules files, in merge order: name and positions.
    pub rules: Vec<(&'a str, &'a Locations)>,
    /// Every content item where it was read, in release order.
    pub content: &'a [Placed<'a>],
    pub manifest: Option<&'a Locations>,
}

/// Loads `release` after `dependencies` and reports the load errors about it; the ruleset when it
/// loads.
pub fn check(
    release: &PackRelease,
    dependencies: &[&PackRelease],
    sources: &Sources<'_>,
    problems: &mut Vec<Problem>,
) -> Option<Ruleset> {
    let mut releases: Vec<PackRelease> = dependencies.iter().map(|d| (*d).clone()).collect();
    releases.push(release.clone());
    let errors = match load_ruleset(&releases, &LoadOptions::default()) {
        Ok(ruleset) => return Some(ruleset),
        Err(errors) => errors,
    };
    let pack = release.id.as_str();
    let mut rules_json = None;
    for error in errors {
        // A dependency's own errors are its folder's to report.
        let about = error.data.get("pack").and_then(Value::as_str);
        if about.is_some_and(|p| p != pack) {
            continue;
        }
        let problem = locate(&error, pack, release, sources, &mut rules_json);
        problems.push(problem);
    }
    None
}

fn locate(
    error: &LoadErrorRecord,
    pack: &str,
    release: &PackRelease,
    sources: &Sources<'_>,
    rules_json: &mut Option<Value>,
) -> Problem {
    let mut problem = Problem::error(&error.code, error.message.clone());
    for (key, value) in &error.data {
        problem = problem.with(key, value.clone());
    }
    let path = error.path.as_deref().unwrap_or("");
    let content_prefix = format!("/packs/{pack}/content/");
    if let Some(index) = path
        .strip_prefix(&content_prefix)
        .and_then(|rest| rest.parse::<usize>().ok())
        && let Some(placed) = sources.content.get(index)
    {
        let pointer = placed.pointer.clone();
        return problem
            .in_file(placed.file)
            .at(&pointer, placed.locations.value(&pointer));
    }
    if path == format!("/packs/{pack}/rules") {
        let rules = rules_json
            .get_or_insert_with(|| serde_json::to_value(&release.rules).unwrap_or(Value::Null));
        for pointer in declarations_named(rules, error) {
            if let Some((file, there)) = sources.origins.locate(&pointer)
                && let Some((name, locations)) = sources.rules.get(file)
                && let Some(at) = locations.key(&there)
            {
                return problem.in_file(name).at(&there, Some(at));
            }
        }
        if let Some((name, locations)) = sources.rules.first() {
            return problem.in_file(name).at("", locations.value(""));
        }
    }
    match sources.manifest {
        Some(locations) => problem.in_file("pack.yaml").at("", locations.value("")),
        None => problem.in_file("pack.yaml"),
    }
}

/// Pointers into the merged rules of the declarations an error's data names: a keyed section's
/// entry with that key, a listed section's entry with that `id`.
fn declarations_named(rules: &Value, error: &LoadErrorRecord) -> Vec<String> {
    let names: Vec<&str> = error
        .data
        .iter()
        .filter(|(key, _)| key.as_str() != "pack")
        .filter_map(|(_, value)| value.as_str())
        .collect();
    let mut out = Vec::new();
    let Value::Object(sections) = rules else {
        return out;
    };
    for name in names {
        // A qualified name is the pack's own here (another pack's errors were left out).
        let local = name.split_once(':').map_or(name, |(_, local)| local);
        for (section, value) in sections {
            match value {
                Value::Object(entries) if entries.contains_key(local) => {
                    out.push(format!("/{section}/{}", escape(local)));
                }
                Value::Array(entries) => {
                    if let Some(index) = entries
                        .iter()
                        .position(|e| e.get("id").and_then(Value::as_str) == Some(local))
                    {
                        out.push(format!("/{section}/{index}"));
                    }
                }
                _ => {}
            }
        }
    }
    out
}
