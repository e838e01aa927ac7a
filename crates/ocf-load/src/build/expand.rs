//! Family expansion in the build (EC, loadRuleset step 1): each rules file and content file is
//! expanded with the families the pack sees (its own and its given dependencies'), so the release
//! is published expanded and the checks see what loading will. Positions follow the expansion: an
//! expanded key is found where its family key was written, and each expansion problem is reported
//! at the node that causes it (the family key, the `{family}` ID, the family's or value's entry
//! under `families`, the `fields` naming a set).

use ocf_model::{ContentItem, Keyed, PackManifest, PackRelease, RulesDocument};

use super::locations::Locations;
use super::locations::escape;
use super::problem::Problem;
use crate::families::{self, FamilyError, FamilyIndex, Site};
use crate::ruleset::scope_of;

/// The families a pack's files are expanded with: the index of the pack's own (from its rules
/// files) and its given dependencies', with the index's problems. A pack without a manifest is not
/// expanded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Families {
    expansion: Option<Expansion>,
    /// `invalid-family` problems of the index, in the files they are about.
    pub problems: Vec<Problem>,
}

#[derive(Debug, Clone, PartialEq)]
struct Expansion {
    pack: String,
    scope: Vec<String>,
    index: FamilyIndex,
}

impl Families {
    /// The families of the pack whose manifest is `manifest` and whose rules files are `rules`
    /// (name, document and positions, in path order), with `dependencies` given.
    pub fn of(
        manifest: Option<(&PackManifest, &Locations)>,
        dependencies: &[PackRelease],
        rules: &[(&str, &RulesDocument, &Locations)],
    ) -> Families {
        let Some((manifest, manifest_locations)) = manifest else {
            return Families::default();
        };
        let pack = manifest.id.as_str();
        let mut own = PackRelease {
            id: manifest.id.clone(),
            version: manifest.version.clone(),
            spec_version: manifest.spec_version.clone(),
            dependencies: manifest.dependencies.clone(),
            rules: RulesDocument::default(),
            content: Vec::new(),
            default_locale: None,
            texts: Default::default(),
        };
        for (_, doc, _) in rules {
            // A name two files declare is the merge's `duplicate-id`; the first is used here.
            extend(&mut own.rules.families, &doc.families);
            extend(&mut own.rules.view_fields, &doc.view_fields);
        }
        let mut releases: Vec<PackRelease> = dependencies
            .iter()
            .filter(|d| d.id != own.id)
            .cloned()
            .collect();
        releases.push(own);
        let (index, errors) = families::index(&releases);
        let problems = errors
            .into_iter()
            .map(|error| index_problem(error, pack, rules, manifest_locations))
            .collect();
        Families {
            expansion: Some(Expansion {
                pack: pack.to_owned(),
                scope: scope_of(pack, &releases),
                index,
            }),
            problems,
        }
    }

    fn site<'a>(&'a self, budget: &'a families::Budget) -> Option<(Site<'a>, &'a FamilyIndex)> {
        let expansion = self.expansion.as_ref()?;
        let site = Site {
            pack: &expansion.pack,
            scope: &expansion.scope,
            path: "",
            budget,
        };
        Some((site, &expansion.index))
    }

    /// Expands a rules file in place, the pack's expansion having produced `budget` nodes
    /// before it (one budget for the pack's files, in path order); problems are `invalid-family`.
    pub fn expand_rules(
        &self,
        (file, doc, locations): (&str, &mut RulesDocument, &mut Locations),
        budget: &families::Budget,
        problems: &mut Vec<Problem>,
    ) {
        let Some((site, index)) = self.site(budget) else {
            return;
        };
        let (expanded, errors) = families::expand_rules(doc, site, index);
        for error in errors {
            problems.push(problem(error, file, locations, None));
        }
        if expanded.changed {
            locations.alias(&expanded.renames);
            *doc = expanded.value;
        }
    }

    /// Expands a content file's items in place (`listed` becomes true when one written item
    /// becomes several), as [`Families::expand_rules`].
    pub fn expand_content(
        &self,
        (file, items, listed, locations): (&str, &mut Vec<ContentItem>, &mut bool, &mut Locations),
        budget: &families::Budget,
        problems: &mut Vec<Problem>,
    ) {
        let Some((site, index)) = self.site(budget) else {
            return;
        };
        let (expanded, errors) = families::expand_items(items, site, &|_| String::new(), index);
        for error in errors {
            // Written pointers are into the list of written items; a file of one item is that
            // item, at ``.
            let written = &error.written.pointer;
            let pointer = match *listed {
                true => None,
                false => Some(written.strip_prefix("/0").unwrap_or(written).to_owned()),
            };
            problems.push(problem(error, file, locations, pointer));
        }
        if expanded.changed {
            // A file of one item is that item at ``: written pointers are `/0`-relative.
            let mut renames: Vec<(String, String)> = Vec::new();
            if !*listed && expanded.value.len() > 1 {
                // The one written item becomes a list: its first copy is `/0`.
                renames.push((String::new(), "/0".to_owned()));
            }
            renames.extend(expanded.renames.into_iter().map(|(written, to)| {
                let written = match *listed {
                    true => written,
                    false => written.strip_prefix("/0").unwrap_or(&written).to_owned(),
                };
                let to = match (*listed, expanded.value.len()) {
                    (false, 1) => to.strip_prefix("/0").unwrap_or(&to).to_owned(),
                    _ => to,
                };
                (written, to)
            }));
            locations.alias(&renames);
            if expanded.value.len() != 1 {
                *listed = true;
            }
            *items = expanded.value;
        }
    }
}

fn extend<V: Clone>(into: &mut Keyed<V>, from: &Keyed<V>) {
    for (key, value) in from.iter() {
        into.0
            .entry(key.to_owned())
            .or_insert_with(|| value.clone());
    }
}

/// A problem of the family index. The pack's own is at the family or value it is about, in the
/// rules file whose declaration the pack uses (the first to write that name under `families`). A
/// dependency's has no node in this folder: it is at the dependency in `pack.yaml`, or at the
/// manifest when the pack does not declare it.
fn index_problem(
    error: FamilyError,
    pack: &str,
    rules: &[(&str, &RulesDocument, &Locations)],
    manifest: &Locations,
) -> Problem {
    let own = error.record.data.get("pack").and_then(|p| p.as_str()) == Some(pack);
    let written = &error.written.pointer;
    let declaring = rules.iter().find(|(_, doc, _)| {
        doc.families.iter().any(|(name, _)| {
            let entry = format!("/families/{}", escape(name));
            *written == entry || written.starts_with(&format!("{entry}/"))
        })
    });
    match declaring {
        Some((file, _, locations)) if own => problem(error, file, locations, None),
        _ => {
            let dependency = error.record.data.get("pack").and_then(|p| p.as_str());
            let pointer = dependency
                .map(|id| format!("/dependencies/{}", escape(id)))
                .filter(|pointer| manifest.has(pointer))
                .unwrap_or_default();
            problem(error, "pack.yaml", manifest, Some(pointer))
        }
    }
}

/// An expansion problem as a build problem in `file`, at the node it is about (its key, or its
/// value when the problem is in the value), or at `pointer` when given instead.
fn problem(
    error: FamilyError,
    file: &str,
    locations: &Locations,
    pointer: Option<String>,
) -> Problem {
    let pointer = pointer.unwrap_or(error.written.pointer);
    let position = match error.written.value {
        true => locations.value(&pointer),
        false => locations.key(&pointer),
    };
    let record = error.record;
    let mut problem = Problem::error(&record.code, record.message)
        .in_file(file)
        .at(&pointer, position);
    for (key, value) in record.data {
        problem = problem.with(&key, value);
    }
    problem
}
